// Who hears about a notify event, and what they are told. An event with notify: true and no
// timestamp queues one delivery per device whose filters match and per enabled integration of its
// project, inside the event's own transaction (see ingest.ts). Sending is src/notify/'s job.
import { Lexer, type Token } from "marked";
import { z } from "zod";
import { Forbidden, NotFound } from "../errors.ts";
import type { Repositories, Store } from "../store/store.ts";
import { eventJson, type EventJson } from "./event-json.ts";
import { randomToken } from "./tokens.ts";
import { requireProject } from "./projects.ts";
import { authProblem, p256dhProblem, pushKey } from "./push-keys.ts";
import { onlyStrings } from "./rules.ts";
import { audited } from "./audit.ts";
import { validate } from "./validation.ts";
import { type Actor, COMMAND_LINE } from "../model/audit.ts";
import type { StoredEvent } from "../model/event.ts";
import type { Integration, NewDelivery, Subscription } from "../model/notification.ts";
import type { User } from "../model/user.ts";

export type Payload = { title: string; body: string; url: string; tag: string; icon: string | null; event: EventJson | null; test?: boolean };

/** Which projects (and channels) notify a device; null means everything. */
export type Filters = { project: string; channels: string[] | null }[] | null;

const BODY_LIMIT = 800; // a push message must stay under ~4 KB once encrypted

export function eventPayload(e: StoredEvent, baseUrl: string): Payload {
  return {
    title: `${e.icon ? `${e.icon} ` : ""}${e.name}`,
    body: truncate(e.description ? (e.parser === "markdown" ? markdownText(e.description) : e.description) : `#${e.channel} · ${e.project}`, BODY_LIMIT),
    url: `${baseUrl}/p/${encodeURIComponent(e.project)}/events/${e.id}`,
    tag: `event-${e.id}`,
    icon: e.icon,
    event: eventJson(e),
  };
}

export function testPayload(target: string, baseUrl: string): Payload {
  return { title: "🔔 Test notification", body: `Signalboard can reach ${target}.`, url: `${baseUrl}/settings/notifications`, tag: "signalboard-test", icon: "🔔", event: null, test: true };
}

function truncate(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

/** The words of a markdown text, without its syntax, for a notification's plain-text body. */
export function markdownText(markdown: string): string {
  const out: string[] = [];
  const walk = (tokens: Token[]) => {
    for (const t of tokens) {
      if ("tokens" in t && t.tokens?.length) walk(t.tokens);
      else if (t.type === "list") for (const item of t.items) walk([item]);
      else if ("text" in t && typeof t.text === "string") out.push(t.text);
      if (t.type === "paragraph" || t.type === "heading" || t.type === "list_item" || t.type === "code" || t.type === "space") out.push("\n");
    }
  };
  walk(new Lexer().lex(markdown));
  return out.join("").replace(/\n{2,}/g, "\n").trim();
}

export function matchesFilters(filters: string | null, e: { project: string; channel: string }): boolean {
  if (!filters) return true;
  const list = JSON.parse(filters) as NonNullable<Filters>;
  return list.some((f) => f.project === e.project && (f.channels === null || f.channels.includes(e.channel)));
}

/** Inside the event's transaction: one delivery per matching device and enabled integration. */
export async function queueNotifications(tx: Repositories, e: StoredEvent, baseUrl: string, now: number): Promise<number> {
  const payload = JSON.stringify(eventPayload(e, baseUrl));
  const rows: NewDelivery[] = [];
  // A person limited to some projects hears only of theirs, whatever their devices' filters say.
  const limited = new Map((await tx.users.limitedReach()).map((r) => [r.userId, r.projectIds]));
  const reaches = (userId: number) => limited.get(userId)?.includes(e.projectId) ?? true;
  for (const s of await tx.notifications.allSubscriptions()) if (matchesFilters(s.filters, e) && reaches(s.userId)) rows.push({ target: "push", targetId: s.id, eventId: e.id, payload });
  for (const i of await tx.notifications.integrationsOf(e.projectId)) if (i.enabled) rows.push({ target: "integration", targetId: i.id, eventId: e.id, payload });
  return tx.notifications.enqueue(rows, now);
}

// --- devices --------------------------------------------------------------------------------------

// A browser's subscription arrives as JSON: its length checks see strings only (rules.ts, onlyStrings).
export const subscriptionInput = z.object({
  endpoint: onlyStrings(z.url({ protocol: /^https?$/, error: "must be the push service's URL" }).max(2048)),
  keys: z.object({ p256dh: pushKey(p256dhProblem), auth: pushKey(authProblem) }),
  deviceName: onlyStrings(z.string().trim().min(1, "is required").max(100, "must be at most 100 characters")),
});

export type DeviceView = Subscription & { filterList: Filters };

export function deviceService(store: Store) {
  async function ownDevice(user: User, id: number): Promise<Subscription> {
    const device = await store.notifications.subscription(id);
    if (!device || device.userId !== user.id) throw new NotFound("That device is not registered (any more).");
    return device;
  }

  return {
    async register(user: User, input: unknown, now = Date.now()): Promise<Subscription> {
      const s = validate(subscriptionInput, input);
      return store.notifications.saveSubscription({ userId: user.id, endpoint: s.endpoint, p256dh: s.keys.p256dh, auth: s.keys.auth, deviceName: s.deviceName }, now);
    },

    /** A device seen again keeps its subscription alive (see pruneSubscriptions). */
    async refresh(user: User, endpoint: string, now = Date.now()): Promise<boolean> {
      return store.notifications.refreshSubscription(user.id, endpoint, now);
    },

    async list(user: User): Promise<DeviceView[]> {
      return (await store.notifications.subscriptionsOf(user.id)).map((d) => ({ ...d, filterList: d.filters ? (JSON.parse(d.filters) as Filters) : null }));
    },

    async get(user: User, id: number): Promise<DeviceView> {
      const d = await ownDevice(user, id);
      return { ...d, filterList: d.filters ? (JSON.parse(d.filters) as Filters) : null };
    },

    async remove(user: User, id: number): Promise<void> {
      await ownDevice(user, id);
      await store.notifications.deleteSubscription(id);
    },

    /** `choices` are "project" or "project/channel" strings; none, or all projects whole, means everything. */
    async setFilters(user: User, id: number, choices: string[]): Promise<void> {
      await ownDevice(user, id);
      const byProject = new Map<string, string[] | null>();
      for (const choice of choices) {
        const [project, channel] = choice.split("/");
        if (!project || !(await store.projects.findByName(project))) continue;
        if (!channel) byProject.set(project, null);
        else if (byProject.get(project) !== null) byProject.set(project, [...(byProject.get(project) ?? []), channel]);
      }
      const filters: Filters = byProject.size ? [...byProject].map(([project, channels]) => ({ project, channels })) : null;
      await store.notifications.setFilters(id, filters ? JSON.stringify(filters) : null);
    },

    async sendTest(user: User, id: number, baseUrl: string, now = Date.now()): Promise<void> {
      const device = await ownDevice(user, id);
      const payload = JSON.stringify(testPayload(device.deviceName, baseUrl));
      await store.notifications.enqueue([{ target: "push", targetId: id, eventId: null, payload }], now);
    },

    async deliveries(user: User) {
      const ids = (await store.notifications.subscriptionsOf(user.id)).map((d) => d.id);
      return store.notifications.deliveriesFor("push", ids);
    },
  };
}

// --- integrations ---------------------------------------------------------------------------------

const httpUrl = z.url({ protocol: /^https?$/, error: "must be an http(s) URL" }).max(2048);
export const integrationInput = z.discriminatedUnion(
  "kind",
  [
    z.object({ kind: z.literal("webhook"), name: z.string().trim().min(1, "is required").max(100), url: httpUrl }),
    z.object({
      kind: z.literal("ntfy"),
      name: z.string().trim().min(1, "is required").max(100),
      url: httpUrl,
      topic: z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, "must be 1-64 letters, digits, dashes or underscores"),
      token: z.string().trim().max(200).optional(),
    }),
    // Checked by path, not host, so a self-hosted relay or a proxy in between also works.
    z.object({ kind: z.literal("discord"), name: z.string().trim().min(1, "is required").max(100), url: httpUrl.refine((u) => /\/api\/webhooks\/\d+\/[\w-]+$/.test(u), "must be a Discord webhook URL (https://discord.com/api/webhooks/ID/TOKEN)") }),
    z.object({ kind: z.literal("slack"), name: z.string().trim().min(1, "is required").max(100), url: httpUrl.refine((u) => /\/services\/[\w/]+$/.test(u), "must be a Slack incoming webhook URL (https://hooks.slack.com/services/...)") }),
  ],
  { error: "kind must be webhook, ntfy, discord or slack" },
);

export type IntegrationView = Omit<Integration, "secret" | "url"> & { url: string; hasSecret: boolean };

/** Secrets are shown once; afterwards a URL that is itself a secret shows only its host and tail. */
export function maskIntegration(i: Integration): IntegrationView {
  const { secret, url, ...rest } = i;
  const secretUrl = i.kind === "discord" || i.kind === "slack";
  return { ...rest, url: secretUrl ? maskUrl(url) : url, hasSecret: Boolean(secret) };
}

export function maskUrl(url: string): string {
  const parsed = new URL(url);
  return `${parsed.origin}/…${url.slice(-4)}`;
}

const integrationSubject = (i: Pick<Integration, "id" | "name">, project: string) => `integration “${i.name}” (${i.id}) of ${project}`;

export function integrationService(store: Store) {
  async function own(projectName: string, id: number): Promise<Integration> {
    const project = await store.projects.findByName(projectName);
    const integration = await store.notifications.integration(id);
    if (!project || !integration || integration.projectId !== project.id) throw new NotFound("That integration does not exist.");
    return integration;
  }

  return {
    async list(projectName: string): Promise<IntegrationView[]> {
      const project = await requireProject(store, projectName);
      return (await store.notifications.integrationsOf(project.id)).map(maskIntegration);
    },

    /** Returns the signing secret of a new webhook: shown once, then never again. `by`: the member adding it. */
    async create(projectName: string, input: unknown, by: User | null = null, actor: Actor = by ? { userId: by.id, name: by.username, ip: null } : COMMAND_LINE, now = Date.now()): Promise<{ integration: IntegrationView; secret: string | null }> {
      const project = await requireProject(store, projectName);
      const i = validate(integrationInput, input);
      const secret = i.kind === "webhook" ? `whsec_${randomToken().slice(3)}` : i.kind === "ntfy" ? i.token || null : null;
      const row = await audited(store, actor, async (tx, note) => {
        const made = await tx.notifications.createIntegration({ projectId: project.id, kind: i.kind, name: i.name, url: i.kind === "ntfy" ? i.url.replace(/\/+$/, "") : i.url, topic: i.kind === "ntfy" ? i.topic : null, secret, createdByUserId: by?.id ?? null }, now);
        note("integration.created", integrationSubject(made, project.name), made.kind);
        return made;
      }, now);
      return { integration: maskIntegration(row), secret: i.kind === "webhook" ? secret : null };
    },

    /** How many enabled integrations a member added (across projects). */
    createdBy(userId: number): Promise<number> {
      return store.notifications.integrationsCreatedBy(userId);
    },

    async setEnabled(projectName: string, id: number, enabled: boolean, actor: Actor = COMMAND_LINE): Promise<void> {
      const integration = await own(projectName, id);
      await audited(store, actor, async (tx, note) => {
        await tx.notifications.setIntegrationEnabled(id, enabled);
        if (integration.enabled !== enabled) note("integration.changed", integrationSubject(integration, projectName), enabled ? "turned on" : "turned off");
      });
    },

    async remove(projectName: string, id: number, actor: Actor = COMMAND_LINE): Promise<void> {
      const integration = await own(projectName, id);
      await audited(store, actor, async (tx, note) => {
        await tx.notifications.deleteIntegration(id);
        note("integration.deleted", integrationSubject(integration, projectName), integration.kind);
      });
    },

    async sendTest(projectName: string, id: number, baseUrl: string, now = Date.now()): Promise<void> {
      const integration = await own(projectName, id);
      if (!integration.enabled) throw new Forbidden("Enable the integration first.");
      const payload = JSON.stringify(testPayload(integration.name, baseUrl));
      await store.notifications.enqueue([{ target: "integration", targetId: id, eventId: null, payload }], now);
    },
  };
}
