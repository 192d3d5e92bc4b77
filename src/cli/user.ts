import { GIVEN_ROLES, type Role } from "../model/user.ts";
import { randomToken } from "../domain/tokens.ts";
import {
  type Command,
  configFrom,
  managementOptions,
  parse,
  table,
  UsageError,
  when,
  withServices,
} from "./command.ts";

/** The password: from stdin with --password-stdin, else a strong generated one that is printed once. */
async function passwordFrom(values: { "password-stdin"?: boolean }): Promise<{ password: string; generated: boolean }> {
  if (values["password-stdin"]) {
    const text = (await Bun.stdin.text()).replace(/\r?\n$/, "");
    if (!text) throw new UsageError("--password-stdin read an empty password");
    return { password: text, generated: false };
  }
  return { password: randomToken().slice(3, 23), generated: true };
}

/** The usage line and the refusal of another role say the same roles: these. */
const ROLE_OPTION = `--role ${GIVEN_ROLES.join("|")}`;

function roleFrom(value: string | undefined): Role | undefined {
  if (value === undefined) return undefined;
  if (!(GIVEN_ROLES as readonly string[]).includes(value))
    throw new UsageError(
      `--role must be ${GIVEN_ROLES.slice(0, -1).join(", ")} or ${GIVEN_ROLES.at(-1)}, not "${value}"${value === "owner" ? " (an owner is made with --owner)" : ""}`,
    );
  return value as Role;
}

/** --projects a,b limits someone to those projects; --all-projects lifts a limit; neither: undefined. */
function projectsFrom(values: { projects?: string; "all-projects"?: boolean }): string[] | null | undefined {
  if (values.projects !== undefined && values["all-projects"])
    throw new UsageError("use --projects or --all-projects, not both");
  if (values["all-projects"]) return null;
  if (values.projects === undefined) return undefined;
  const names = values.projects
    .split(",")
    .map((p) => p.trim())
    .filter(Boolean);
  if (!names.length) throw new UsageError("--projects needs at least one project name (a,b,c), or use --all-projects");
  return names;
}

const projectsText = (projects: string[] | null) => (projects === null ? "all projects" : projects.join(",") || "none");

export const user: Command = {
  summary:
    "create dashboard users, set their role and projects, reset passwords and second factors, make a sign-in link, list users",
  usage:
    `signalboard user create NAME [--owner | ${ROLE_OPTION}] [--projects A,B] [--password-stdin] | ` +
    `user set NAME [${ROLE_OPTION}] [--projects A,B | --all-projects] | user reset-password NAME [--password-stdin] | user reset-2fa NAME | user sign-in-link NAME | user list`,
  async run(argv) {
    const { values, positionals } = parse(argv, {
      ...managementOptions,
      owner: { type: "boolean" },
      role: { type: "string" },
      projects: { type: "string" },
      "all-projects": { type: "boolean" },
      "password-stdin": { type: "boolean" },
    });
    const [action, name] = positionals;
    const role = roleFrom(values.role);
    const projects = projectsFrom(values);
    if (values.owner && role) throw new UsageError("--owner and --role say different things: give one");
    const config = configFrom(values, { installed: true });
    return withServices(config, values, async ({ accounts, members, secondFactor }) => {
      if (action === "create" && name) {
        const { password, generated } = await passwordFrom(values);
        const created = await accounts.createUser({ username: name, password }, values.owner ? "owner" : role, {
          projects,
        });
        console.log(
          `Created ${created.role} "${created.username}"${created.role === "owner" ? "" : `, seeing ${projectsText(created.projects)}`}.`,
        );
        if (generated)
          console.log(
            `Password (shown once; change it with user reset-password, or in Settings → Account):\n${password}`,
          );
        return 0;
      }
      if (action === "set" && name) {
        if (!role && projects === undefined)
          throw new UsageError("say what to change: --role, --projects or --all-projects");
        const target = (await accounts.list()).find((u) => u.username === name.toLowerCase());
        if (!target) throw new UsageError(`no user named "${name}"; list them with: signalboard user list`);
        // The command line does what the owner does in Settings → Members.
        const changed = await members.change(null, target.id, {
          role: role ?? target.role,
          projects: projects === undefined ? target.projects : projects,
        });
        console.log(
          `"${changed.user.username}" is now ${changed.user.role}, seeing ${projectsText(changed.user.projects)}.${changed.revokedTokens ? ` ${changed.revokedTokens} API token(s) they made were revoked (of projects no longer theirs, or all of them for one no longer an admin).` : ""}`,
        );
        return 0;
      }
      if (action === "reset-password" && name) {
        const { password, generated } = await passwordFrom(values);
        const updated = await accounts.resetPassword(name, password);
        console.log(`New password set for "${updated.username}"; their sessions were signed out.`);
        if (generated) console.log(`Password (shown once):\n${password}`);
        return 0;
      }
      if (action === "reset-2fa" && name) {
        // For a lost phone: the authenticator, its recovery codes and their passkeys go (in the
        // audit trail); the password stays, and they set a factor up again in Settings → Account
        // (or at their next sign-in, where one is required).
        const had = await secondFactor.reset(name);
        const who = name.toLowerCase();
        const removed = [
          ...(had.totp ? ["their authenticator and its recovery codes"] : []),
          ...(had.passkeys ? [`${had.passkeys} passkey${had.passkeys === 1 ? "" : "s"}`] : []),
        ];
        console.log(
          removed.length
            ? `Removed from "${who}": ${removed.join(" and ")}. They sign in with their password and can set up new ones.`
            : `"${who}" has no second factor and no passkey; nothing changed.`,
        );
        return 0;
      }
      if (action === "sign-in-link" && name) {
        // The way in that needs neither a password form nor the identity provider: for the owner
        // when SIGNALBOARD_PASSWORD_LOGIN=off and the provider is down or misconfigured.
        const link = await accounts.signInLink(name);
        console.log(
          `Open this within 15 minutes to sign in as "${link.user.username}" (it works once; no password or second factor is asked):\n${config.baseUrl}/login/link?code=${link.token}`,
        );
        return 0;
      }
      if (action === "list") {
        console.log(
          table([
            ["USER", "ROLE", "PROJECTS", "CREATED"],
            ...(await accounts.list()).map((u) => [u.username, u.role, projectsText(u.projects), when(u.createdAt)]),
          ]),
        );
        return 0;
      }
      throw new UsageError(
        "expected create NAME, set NAME, reset-password NAME, reset-2fa NAME, sign-in-link NAME or list",
      );
    });
  },
};
