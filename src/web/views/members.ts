// Settings → Members: who has an account, their role and the projects they see; adding people
// (admins and the owner), changing a role or a person's projects (the owner), removing people.
import { paths } from "../paths.ts";
import { href } from "../../http/href.ts";
import { type Html, html } from "../html.ts";
import { time } from "./events.ts";
import { settingsNav } from "./settings.ts";
import type { Project } from "../../model/project.ts";
import type { Role, User } from "../../model/user.ts";

export const ROLE_TEXT: Record<Role, string> = {
  owner: "everything, and alone assigns roles and projects",
  admin: "members, API tokens, integrations and settings",
  member: "changes projects, channels, charts, dashboards and alert rules",
  viewer: "sees pages, searches and charts; changes nothing",
};

export type MembersView = {
  users: User[];
  me: User;
  /** The projects `me` may give (theirs). */
  projects: Project[];
  /** The roles `me` may give when adding someone. */
  roles: Role[];
  /** Whom `me` may remove. */
  removable: (u: User) => boolean;
  /** The person whose role or projects were just changed. */
  changed?: User | null;
  form?: Html;
  /** Whether a second factor is required of every password sign-in, and who has one. */
  secondFactor?: { required: boolean; withFactor: number[]; csrf: string; saved?: boolean };
};

/** Settings → Members: an admin's setting, a second factor for everyone who signs in with a password. */
function secondFactorSetting(v: NonNullable<MembersView["secondFactor"]>, users: User[]): Html {
  const without = users.filter((u) => !v.withFactor.includes(u.id)).length;
  return html`<section class="card" aria-labelledby="factor-setting-title">
  <h2 id="factor-setting-title">Two-step sign-in</h2>
  ${v.saved ? html`<p class="alert success" role="status" data-testid="factor-setting-saved">Saved.</p>` : ""}
  <p>${users.length - without} of ${users.length} ${users.length === 1 ? "person has" : "people have"} an authenticator app set up (Settings → Account).</p>
  <form method="post" action="${paths.secondFactorRequired}" class="stack">
    <input type="hidden" name="_csrf" value="${v.csrf}">
    <label class="check"><input type="checkbox" name="required" value="on" data-testid="require-factor"${v.required ? " checked" : ""}> Require a second factor of everyone who signs in with a password</label>
    <p class="hint">Someone without one is asked to set up an authenticator right after their password, before they are signed in. Sessions already open stay open.</p>
    <button type="submit" data-testid="require-factor-save">Save</button>
  </form>
</section>`;
}

/** A person's projects as `me` may see them: names beyond `me`'s own are not shown. */
function projectsOf(u: User, me: User): string {
  if (u.projects === null) return "All projects";
  const shown = me.projects === null ? u.projects : u.projects.filter((p) => me.projects!.includes(p));
  return shown.length ? shown.join(", ") : "No project";
}

export function membersPage(v: MembersView): Html {
  const owner = v.me.role === "owner";
  return html`<header class="page-header"><h1>Settings</h1></header>
${settingsNav(paths.members)}
<section class="card" aria-labelledby="members-title">
  <h2 id="members-title">Members</h2>
  ${v.changed ? html`<p class="alert success" role="status" data-testid="member-saved">Saved: ${v.changed.username} is ${v.changed.role === "admin" ? "an" : "a"} ${v.changed.role} and sees ${v.changed.projects === null ? "every project" : v.changed.projects.join(", ") || "no project"}, from their next click (their open pages stop showing what they may no longer see).</p>` : ""}
  <div class="table-wrap"><table class="members cards">
    <thead><tr><th>User</th><th>Role</th><th>Projects</th><th>Since</th><th><span class="visually-hidden">Actions</span></th></tr></thead>
    <tbody>${v.users.map(
      (
        u,
      ) => html`<tr id="user-${u.id}"><td class="card-title">${u.username}${u.id === v.me.id ? html` <span class="muted">(you)</span>` : ""}${v.secondFactor?.withFactor.includes(u.id) ? html` <span class="muted small" data-testid="has-factor-${u.username}">· two-step</span>` : ""}</td>
      <td data-label="Role" data-testid="role-${u.username}">${u.role}</td>
      <td data-label="Projects" data-testid="projects-${u.username}">${projectsOf(u, v.me)}</td>
      <td data-label="Since">${time(u.createdAt)}</td>
      <td class="row-actions">${v.removable(u) ? html`<button type="button" class="secondary danger small" hx-get="${href(paths.memberRemove, { id: u.id })}" hx-target="#modal" data-testid="remove-${u.username}">Remove</button>` : ""}
      ${owner && u.role !== "owner" ? memberChangeForm(u, v.projects) : ""}</td></tr>`,
    )}</tbody>
  </table></div>
</section>
<section class="card" aria-labelledby="add-member">
  <h2 id="add-member">Add a member</h2>
  ${v.form ?? memberForm({ roles: v.roles, projects: v.projects, mine: v.me.projects })}
</section>
${v.secondFactor ? secondFactorSetting(v.secondFactor, v.users) : ""}
<section class="card" aria-labelledby="roles-title">
  <h2 id="roles-title">Roles</h2>
  <dl class="roles">${(["owner", "admin", "member", "viewer"] as Role[]).map((r) => html`<dt>${r}</dt><dd>${ROLE_TEXT[r]}</dd>`)}</dl>
  <p class="muted small">A person limited to some projects sees only those, everywhere: the sidebar, pages, searches, users, live updates, charts, alerts, notifications, and the API tokens they make.${owner ? "" : " Only the owner changes a person's role or projects."}</p>
</section>`;
}

/** The projects a person sees: every project, or some, ticked. `mine`: the adder's own, when limited (then "every project" is not theirs to give). */
function projectChoice(
  id: string,
  projects: Project[],
  chosen: string[] | null,
  mine: string[] | null,
  error?: string,
): Html {
  const every = mine === null;
  return html`<fieldset class="stack" x-data="projectChoice">
    <legend>Projects</legend>
    ${
      every
        ? html`<label class="choice"><input type="radio" name="reach" value="all" x-on:change="pick"${chosen === null ? " checked" : ""}> Every project, including new ones</label>
    <label class="choice"><input type="radio" name="reach" value="some" x-on:change="pick"${chosen !== null ? " checked" : ""}> Only these projects:</label>`
        : html`<input type="hidden" name="reach" value="some"><p class="muted small">Only these projects (of yours):</p>`
    }
    <div class="project-choices" id="${id}-projects">${projects.map(
      (p) =>
        html`<label class="choice"><input type="checkbox" name="projects" value="${p.name}" x-on:change="tick"${chosen?.includes(p.name) ? " checked" : ""}> ${p.name}</label>`,
    )}${projects.length ? "" : html`<p class="muted small">No project yet.</p>`}</div>
    ${error ? html`<p class="hint error" role="alert">${error}</p>` : ""}
  </fieldset>`;
}

export function memberForm(opts: {
  roles: Role[];
  projects: Project[];
  mine: string[] | null;
  values?: { username?: string; role?: string; projects?: string[] | null };
  errors?: Record<string, string>;
}): Html {
  const v = opts.values ?? {};
  const role = v.role ?? "member";
  return html`<form id="member-form" class="stack" hx-post="${paths.members}" hx-target="this" hx-swap="outerHTML">
  <label for="member-username">Username</label>
  <input id="member-username" name="username" value="${v.username ?? ""}" autocomplete="off" required>
  ${opts.errors?.username ? html`<p class="hint error" role="alert">${opts.errors.username}</p>` : ""}
  <label for="member-password">Password (at least 8 characters; share it with them, they can change it in Settings → Account)</label>
  <input id="member-password" name="password" type="password" autocomplete="new-password" required>
  ${opts.errors?.password ? html`<p class="hint error" role="alert">${opts.errors.password}</p>` : ""}
  <label for="member-role">Role</label>
  <select id="member-role" name="role">${opts.roles.map((r) => html`<option value="${r}"${r === role ? " selected" : ""}>${r}: ${ROLE_TEXT[r]}</option>`)}</select>
  ${opts.errors?.role ? html`<p class="hint error" role="alert">${opts.errors.role}</p>` : ""}
  ${projectChoice("new-member", opts.projects, v.projects === undefined ? (opts.mine ? [] : null) : v.projects, opts.mine, opts.errors?.projects)}
  <button type="submit">Add member</button>
</form>`;
}

/** The owner's form for one person's role and projects. */
export function memberChangeForm(u: User, projects: Project[], opts: { errors?: Record<string, string> } = {}): Html {
  return html`<details id="change-${u.id}" class="member-change"${opts.errors ? " open" : ""}>
  <summary data-testid="change-${u.username}">Change<span class="visually-hidden"> ${u.username}'s</span> role or projects</summary>
  <form class="stack" hx-post="${href(paths.member, { id: u.id })}" hx-target="#change-${u.id}" hx-swap="outerHTML">
    <label for="role-${u.id}">Role</label>
    <select id="role-${u.id}" name="role" data-testid="change-role-${u.username}">${(["admin", "member", "viewer"] as Role[]).map((r) => html`<option value="${r}"${r === u.role ? " selected" : ""}>${r}: ${ROLE_TEXT[r]}</option>`)}</select>
    ${opts.errors?.role ? html`<p class="hint error" role="alert">${opts.errors.role}</p>` : ""}
    ${projectChoice(`change-${u.id}`, projects, u.projects, null, opts.errors?.projects)}
    <button type="submit" class="small" data-testid="save-${u.username}">Save</button>
  </form>
</details>`;
}
