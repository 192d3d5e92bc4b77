// Status badges: a check's state (or a project's, all its checks at once) as a shields.io-style
// badge, public by the project's badge key (an unguessable secret of its own, not the ping key, so
// showing a badge in a README gives nobody a way to ping). Also what the Checks page reads beside
// the checks: their latest runs, in one read for the page.
import { type Clock, systemClock } from "../clock.ts";
import { type Actor, COMMAND_LINE } from "../model/audit.ts";
import type { Check, CheckRun } from "../model/check.ts";
import type { Project } from "../model/project.ts";
import type { Store } from "../store/store.ts";
import { audited } from "./audit.ts";
import { dueAt } from "./check-notices.ts";
import { newPingKey, SLUG } from "./checks.ts";
import { requireProject } from "./projects.ts";
import { escapeHtml } from "./safe-html.ts";

/** What a badge says: up, down, late (past due, within its grace), or new and paused (grey). */
export type BadgeStatus = "up" | "down" | "late" | "new" | "paused";

/** Runs a Checks page shows per check. */
export const RUNS_SHOWN = 50;

/** shields.io's colour names, and the same colours as its flat badges draw them. */
const COLORS: Record<BadgeStatus, { name: string; hex: string }> = {
  up: { name: "brightgreen", hex: "#4c1" },
  down: { name: "red", hex: "#e05d44" },
  late: { name: "yellow", hex: "#dfb317" },
  new: { name: "lightgrey", hex: "#9f9f9f" },
  paused: { name: "lightgrey", hex: "#9f9f9f" },
};

/** A badge key: 22 URL-safe characters, made as a ping key is. */
export const BADGE_KEY = /^[A-Za-z0-9_-]{22}$/;

/**
 * Where a check stands for its badge at `now`: up (or started), late once its period (or cron time)
 * has passed with no success while its grace runs (dueAt is the end of the grace; past it the round
 * records it down), down, new or paused.
 */
export function badgeStatus(c: Check, now: number): BadgeStatus {
  if (c.paused || c.state === "paused") return "paused";
  if (c.state === "new" || c.state === "down") return c.state;
  const due = c.state === "up" ? dueAt(c) : null;
  if (due !== null && now > due - c.grace * 1000) return "late";
  return "up";
}

/** A project's checks together: down if any is, else late if any is, else up if any is; new when none has reported. */
export function projectStatus(checks: Check[], now: number): BadgeStatus {
  const all = checks.map((c) => badgeStatus(c, now));
  for (const s of ["down", "late", "up", "new"] as const) if (all.includes(s)) return s;
  return checks.length ? "paused" : "new";
}

/** shields.io's endpoint answer (https://shields.io/badges/endpoint-badge). */
export type BadgeJson = { schemaVersion: 1; label: string; message: string; color: string };

export const badgeJson = (label: string, status: BadgeStatus): BadgeJson => ({
  schemaVersion: 1,
  label,
  message: status,
  color: COLORS[status].name,
});

/** About how wide Verdana 11px draws `text`, as shields.io measures it (narrow, wide and other characters). */
function textWidth(text: string): number {
  let w = 0;
  for (const ch of text)
    w += /[ilj.,:;'|!It\s]/.test(ch) ? 3.5 : /[mwMW@%]/.test(ch) ? 10 : /[A-Z]/.test(ch) ? 7.5 : 6.6;
  return Math.round(w);
}

/** A flat badge, as shields.io draws one: the label on grey, the status on its colour; every text escaped. */
export function badgeSvg(label: string, status: BadgeStatus): string {
  const lw = textWidth(label) + 10;
  const mw = textWidth(status) + 10;
  const w = lw + mw;
  const l = escapeHtml(label);
  const m = escapeHtml(status);
  const text = (x: number, t: string) =>
    `<text x="${x}" y="15" fill="#010101" fill-opacity=".3">${t}</text><text x="${x}" y="14">${t}</text>`;
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${w}" height="20" role="img" aria-label="${l}: ${m}"><title>${l}: ${m}</title><linearGradient id="s" x2="0" y2="100%"><stop offset="0" stop-color="#bbb" stop-opacity=".1"/><stop offset="1" stop-opacity=".1"/></linearGradient><clipPath id="r"><rect width="${w}" height="20" rx="3" fill="#fff"/></clipPath><g clip-path="url(#r)"><rect width="${lw}" height="20" fill="#555"/><rect x="${lw}" width="${mw}" height="20" fill="${COLORS[status].hex}"/><rect width="${w}" height="20" fill="url(#s)"/></g><g fill="#fff" text-anchor="middle" font-family="Verdana,Geneva,DejaVu Sans,sans-serif" text-rendering="geometricPrecision" font-size="11">${text(lw / 2, l)}${text(lw + mw / 2, m)}</g></svg>`;
}

export function checkBadgeService(store: Store, { clock = systemClock }: { clock?: Clock } = {}) {
  return {
    /** The project's badge key, made at the first ask (with its ping key, if it has none yet). */
    async badgeKey(projectName: string): Promise<string> {
      const project = await requireProject(store, projectName);
      const known = await store.checks.badgeKey(project.id);
      if (known) return known;
      return store.tx(async (tx) => {
        await tx.checks.lockNames();
        const made = await tx.checks.badgeKey(project.id);
        if (made) return made;
        if (!(await tx.checks.pingKey(project.id))) await tx.checks.setPingKey(project.id, newPingKey(), clock.now());
        const key = newPingKey();
        await tx.checks.setBadgeKey(project.id, key);
        return key;
      });
    },

    /** A new badge key: badges under the old one answer 404 from now on. */
    async regenerateBadgeKey(projectName: string, actor: Actor = COMMAND_LINE, now = clock.now()): Promise<string> {
      await this.badgeKey(projectName);
      const project = await requireProject(store, projectName);
      return audited(
        store,
        actor,
        async (tx, note) => {
          const key = newPingKey();
          await tx.checks.setBadgeKey(project.id, key);
          note("check.badge-key", `badge key of ${project.name}`);
          return key;
        },
        now,
      );
    },

    /**
     * The badge a public URL asks for: one check's (by slug) or, with `slug` null, the project's;
     * null for an unknown key or slug.
     */
    async badge(
      key: string,
      slug: string | null,
      now = clock.now(),
    ): Promise<{ label: string; status: BadgeStatus } | null> {
      if (!BADGE_KEY.test(key) || (slug !== null && !SLUG.test(slug))) return null;
      const projectId = await store.checks.projectOfBadgeKey(key);
      if (projectId === null) return null;
      if (slug === null) {
        const project = await store.projects.findById(projectId);
        if (!project) return null;
        return { label: project.name, status: projectStatus(await store.checks.list(projectId), now) };
      }
      const [check] = await store.checks.findBy({ projectId, slug });
      return check ? { label: check.name, status: badgeStatus(check, now) } : null;
    },

    /** The latest runs of each of the project's checks, oldest first: one read for them all. */
    runs(project: Project, checks: Check[]): Promise<Record<string, CheckRun[]>> {
      if (!checks.length) return Promise.resolve({});
      return store.checks.runs(
        project.id,
        checks.map((c) => c.slug),
        RUNS_SHOWN,
      );
    },
  };
}

export type CheckBadgeService = ReturnType<typeof checkBadgeService>;
