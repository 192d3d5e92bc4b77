import { randomToken } from "../domain/tokens.ts";
import { type Command, configFrom, managementOptions, parse, table, UsageError, when, withServices } from "./command.ts";

/** The password: from stdin with --password-stdin, else a strong generated one that is printed once. */
async function passwordFrom(values: { "password-stdin"?: boolean }): Promise<{ password: string; generated: boolean }> {
  if (values["password-stdin"]) {
    const text = (await Bun.stdin.text()).replace(/\r?\n$/, "");
    if (!text) throw new UsageError("--password-stdin read an empty password");
    return { password: text, generated: false };
  }
  return { password: randomToken().slice(3, 23), generated: true };
}

export const user: Command = {
  summary: "create dashboard users, reset passwords, list users",
  usage: "signalboard user create NAME [--owner] [--password-stdin] | user reset-password NAME [--password-stdin] | user list",
  async run(argv) {
    const { values, positionals } = parse(argv, { ...managementOptions, owner: { type: "boolean" }, "password-stdin": { type: "boolean" } });
    const [action, name] = positionals;
    const config = configFrom(values, { installed: true });
    return withServices(config, values, async ({ accounts }) => {
      if (action === "create" && name) {
        const { password, generated } = await passwordFrom(values);
        const created = await accounts.createUser({ username: name, password }, values.owner ? "owner" : undefined);
        console.log(`Created ${created.role} "${created.username}".`);
        if (generated) console.log(`Password (shown once; change it with user reset-password):\n${password}`);
        return 0;
      }
      if (action === "reset-password" && name) {
        const { password, generated } = await passwordFrom(values);
        const updated = await accounts.resetPassword(name, password);
        console.log(`New password set for "${updated.username}"; their sessions were signed out.`);
        if (generated) console.log(`Password (shown once):\n${password}`);
        return 0;
      }
      if (action === "list") {
        console.log(table([["USER", "ROLE", "CREATED"], ...(await accounts.list()).map((u) => [u.username, u.role, when(u.createdAt)])]));
        return 0;
      }
      throw new UsageError("expected create NAME, reset-password NAME or list");
    });
  },
};
