// What admins and the owner do to other people's accounts: add them, change their role and the
// projects they may see, and remove them. Admins add and remove members and viewers within their
// own projects; only the owner makes admins, changes a role or a person's projects, or removes an admin.
import { Forbidden, NotFound, ValidationError } from "../errors.ts";
import { type Actor, COMMAND_LINE } from "../model/audit.ts";
import { GIVEN_ROLES, type Role, type User } from "../model/user.ts";
import type { Store } from "../store/store.ts";
import { hasRole, within } from "./access.ts";
import { createAccount, type PasswordCost, projectsText } from "./accounts.ts";
import { projectIdsOf } from "./projects.ts";
import { audited } from "./audit.ts";

/** The roles `by` may give when adding someone. */
export function rolesGivenBy(by: Pick<User, "role">): Role[] {
  if (by.role === "owner") return ["admin", "member", "viewer"];
  if (by.role === "admin") return ["member", "viewer"];
  return [];
}

/** Whether `by` may remove `target` (the owner: anyone but themselves; an admin: members and viewers within their projects). */
export function mayRemove(by: User, target: User): boolean {
  if (target.id === by.id || target.role === "owner") return false;
  if (by.role === "owner") return true;
  return by.role === "admin" && !hasRole(target, "admin") && within(target.projects, by.projects);
}

function checkRole(role: string): Role {
  if ((GIVEN_ROLES as readonly string[]).includes(role)) return role as Role;
  throw ValidationError.field("role", "invalid_role", "role: choose admin, member or viewer");
}

/** `passwordCost`: as the accounts service's (see PasswordCost). */
export function memberService(store: Store, { passwordCost }: { passwordCost?: PasswordCost } = {}) {
  async function existing(id: number): Promise<User> {
    const user = await store.users.findById(id);
    if (!user) throw new NotFound("That user no longer exists.");
    return user;
  }

  return {
    /**
     * `by` adds someone, with a role they may give and the projects they may see: every project
     * (null) or some. An admin limited to some projects adds people limited to those or fewer.
     */
    async add(
      by: User,
      input: { username: string; password: string; role: string; projects: string[] | null },
      actor: Actor,
      now = Date.now(),
    ): Promise<User> {
      if (!hasRole(by, "admin")) throw new Forbidden("Only admins and the owner can add members.");
      const role = checkRole(input.role);
      if (!rolesGivenBy(by).includes(role))
        throw ValidationError.field("role", "invalid_role", "role: only the owner can make admins");
      if (!within(input.projects, by.projects))
        throw ValidationError.field(
          "projects",
          "outside_reach",
          `projects: choose among your own projects (${projectsText(by.projects)})`,
        );
      return createAccount(
        store,
        { username: input.username, password: input.password, role, projects: input.projects },
        actor,
        () => role,
        now,
        passwordCost,
      );
    },

    /**
     * The owner (or the command line) changes someone's role and the projects they see. A person limited to fewer projects
     * loses them at once (open pages stop), and so do the API tokens they made: a full-access token
     * keeps only the projects left to them, a public token of another project is revoked. An admin
     * made a member or a viewer loses the API tokens they made (tokens are for admins).
     */
    async change(
      by: User | null,
      id: number,
      input: { role: string; projects: string[] | null },
      actor: Actor = COMMAND_LINE,
      now = Date.now(),
    ): Promise<{ user: User; revokedTokens: number }> {
      // null: the command line, run on the server's machine, which may do what the owner does.
      if (by && by.role !== "owner") throw new Forbidden("Only the owner can change roles and projects.");
      const user = await existing(id);
      if (user.role === "owner")
        throw new Forbidden("The owner's role and projects cannot change: the owner sees and does everything.");
      const role = checkRole(input.role);
      return audited(
        store,
        actor,
        async (tx, note) => {
          const projectIds = input.projects === null ? null : await projectIdsOf(tx, input.projects);
          const changes: string[] = [];
          let revokedTokens = 0;
          if (role !== user.role) {
            await tx.users.setRole(id, role, now);
            // API tokens are an admin's: one who is no longer an admin no longer has the ones they made.
            const revoked = hasRole(user, "admin") && role !== "admin" ? await tx.tokens.revokeCreatedBy(id, now) : 0;
            revokedTokens += revoked;
            changes.push(
              `role ${user.role} → ${role}${revoked ? ` (${revoked} token${revoked === 1 ? "" : "s"} revoked)` : ""}`,
            );
          }
          const projects = input.projects === null ? null : [...new Set(input.projects)].sort();
          if (projectsText(projects) !== projectsText(user.projects)) {
            await tx.users.setProjects(id, projectIds, now);
            const narrowed = projectIds === null ? 0 : await tx.tokens.narrowCreatedBy(id, projectIds, now);
            revokedTokens += narrowed;
            changes.push(
              `projects ${projectsText(user.projects)} → ${projectsText(projects)}${narrowed ? ` (${narrowed} public token${narrowed === 1 ? "" : "s"} revoked)` : ""}`,
            );
          }
          if (changes.length) note("member.changed", `user ${user.username}`, changes.join("; "));
          return { user: { ...user, role, projects }, revokedTokens };
        },
        now,
      );
    },

    /**
     * Removes a person and signs them out everywhere. The API tokens they created are revoked and
     * the integrations they added turned off, unless `keepTokens` (a token or a webhook may serve
     * something that should outlive the person who made it); either way they stop reaching them.
     */
    async remove(
      id: number,
      by: User,
      { keepTokens = false } = {},
      actor: Actor = { userId: by.id, name: by.username, ip: null },
      now = Date.now(),
    ): Promise<{ user: User; revokedTokens: number; disabledIntegrations: number }> {
      if (!hasRole(by, "admin")) throw new Forbidden("Only admins and the owner can remove members.");
      const user = await existing(id);
      if (user.id === by.id) throw new Forbidden("You cannot remove yourself.");
      if (!mayRemove(by, user))
        throw new Forbidden(
          user.role === "owner"
            ? "The owner cannot be removed."
            : "Only the owner can remove admins, or people who see projects you do not.",
        );
      return audited(
        store,
        actor,
        async (tx, note) => {
          await tx.users.delete(id);
          const revokedTokens = keepTokens ? 0 : await tx.tokens.revokeCreatedBy(id, now);
          const disabledIntegrations = keepTokens ? 0 : await tx.notifications.disableCreatedBy(id);
          const kept = keepTokens
            ? "their tokens and integrations kept"
            : `${revokedTokens} token${revokedTokens === 1 ? "" : "s"} revoked, ${disabledIntegrations} integration${disabledIntegrations === 1 ? "" : "s"} turned off`;
          note("member.removed", `user ${user.username}`, `role ${user.role}; ${kept}`);
          return { user, revokedTokens, disabledIntegrations };
        },
        now,
      );
    },
  };
}
