// Who hears about a notify event, and what they are told. An event with notify: true and no
// timestamp queues one delivery per device and per enabled integration of its project whose
// filters let it through (routing.ts), inside the event's own transaction (see ingest.ts), each
// with its message as the receiver gets it: an integration's templates are rendered here
// (templates.ts), so a send never depends on anything but the delivery. Sending is src/notify/'s job.
import { Lexer, type Token } from "marked";
import { z } from "zod";
import { NotFound, ValidationError } from "../errors.ts";
import type { Repositories, Store } from "../store/store.ts";
import { reaches } from "./access.ts";
import { eventJson } from "./event-json.ts";
import { destinationProblem, type OutboundRules } from "./outbound.ts";
import { authProblem, p256dhProblem, pushKey } from "./push-keys.ts";
import { matchesRoute, routeFilter } from "./routing.ts";
import { onlyStrings, PRIORITY } from "./input-fields.ts";
import { kindMessage } from "./integration-kinds/messages.ts";
import type { Payload } from "./payload.ts";
import { type Message, templateView } from "./templates.ts";
import { validate } from "./validation.ts";
import type { StoredEvent } from "../model/event.ts";
import type { Integration, NewDelivery, Subscription } from "../model/notification.ts";
import type { User } from "../model/user.ts";
import { log } from "../logger.ts";

/** Which projects (and channels) notify a device; null means everything. */
export type Filters = { project: string; channels: string[] | null }[] | null;

const BODY_LIMIT = 800; // a push message must stay under ~4 KB once encrypted

export function eventPayload(e: StoredEvent, baseUrl: string): Payload {
  return {
    title: `${e.icon ? `${e.icon} ` : ""}${e.name}`,
    body: truncate(
      e.description
        ? e.parser === "markdown"
          ? markdownText(e.description)
          : e.description
        : `#${e.channel} · ${e.project}`,
      BODY_LIMIT,
    ),
    url: `${baseUrl}/p/${encodeURIComponent(e.project)}/events/${e.id}`,
    tag: `event-${e.id}`,
    icon: e.icon,
    event: eventJson(e),
    priority: e.priority,
  };
}

/** A test message; for an integration, in its kind's format. */
export function testPayload(target: string, baseUrl: string, kind?: string): Payload {
  const base: Payload = {
    title: "🔔 Test notification",
    body: `Signalboard can reach ${target}.`,
    url: `${baseUrl}/settings/notifications`,
    tag: "signalboard-test",
    icon: "🔔",
    event: null,
    priority: PRIORITY.normal,
    test: true,
  };
  return kind ? { ...base, ...kindMessage(kind, null, {}, base) } : base;
}

/** An event's message for one integration: its templates, or the default wording, in its kind's format. */
export function integrationPayload(
  i: Pick<Integration, "id" | "kind" | "template">,
  e: StoredEvent,
  base: Payload,
): Payload {
  const fallback = { title: base.title, body: base.body };
  let message: Message;
  try {
    message = kindMessage(i.kind, i.template, templateView(e, base.url), fallback);
  } catch (error) {
    // Templates are checked when saved; should one still fail, the event goes out in the default wording rather than not at all.
    log.warn("an integration's template failed; sent in the default wording", {
      integration: i.id,
      error: (error as Error).message,
    });
    message = kindMessage(i.kind, null, {}, fallback);
  }
  return { ...base, ...message };
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
      if (
        t.type === "paragraph" ||
        t.type === "heading" ||
        t.type === "list_item" ||
        t.type === "code" ||
        t.type === "space"
      )
        out.push("\n");
    }
  };
  walk(new Lexer().lex(markdown));
  return out
    .join("")
    .replace(/\n{2,}/g, "\n")
    .trim();
}

export function matchesFilters(filters: string | null, e: { project: string; channel: string }): boolean {
  if (!filters) return true;
  const list = JSON.parse(filters) as NonNullable<Filters>;
  return list.some((f) => f.project === e.project && (f.channels === null || f.channels.includes(e.channel)));
}

/** A device's projects and channels, its tags and its least priority. */
export function deviceHears(s: Pick<Subscription, "filters" | "tags" | "minPriority">, e: StoredEvent): boolean {
  if (!matchesFilters(s.filters, e)) return false;
  if (!s.tags && s.minPriority <= PRIORITY.min) return true;
  return matchesRoute(
    { tags: s.tags ? (JSON.parse(s.tags) as Record<string, string>) : undefined, min_priority: s.minPriority },
    e,
  );
}

/** Inside the event's transaction: one delivery per device and enabled integration that hears it. */
export async function queueNotifications(
  tx: Repositories,
  e: StoredEvent,
  baseUrl: string,
  now: number,
): Promise<number> {
  const base = eventPayload(e, baseUrl);
  const pushed = JSON.stringify(base);
  const rows: NewDelivery[] = [];
  const hearing = (await tx.notifications.allSubscriptions()).filter((s) => deviceHears(s, e));
  if (hearing.length) {
    // A person limited to some projects hears only of theirs, whatever their devices' filters say
    // (asked only when a device would hear it: a notify event with no device costs no lookup).
    const limited = new Map((await tx.users.limitedReach()).map((r) => [r.userId, r.projectIds]));
    for (const s of hearing)
      if (limited.get(s.userId)?.includes(e.projectId) ?? true)
        rows.push({ target: "push", targetId: s.id, eventId: e.id, payload: pushed });
  }
  for (const i of await tx.notifications.integrationsOf(e.projectId)) {
    if (i.enabled && matchesRoute(i.filter, e))
      rows.push({
        target: "integration",
        targetId: i.id,
        eventId: e.id,
        payload: JSON.stringify(integrationPayload(i, e, base)),
      });
  }
  return tx.notifications.enqueue(rows, now);
}

// --- devices --------------------------------------------------------------------------------------

// A browser's subscription arrives as JSON: its length checks see strings only (input-fields.ts, onlyStrings).
export const subscriptionInput = z.object({
  endpoint: onlyStrings(z.url({ protocol: /^https?$/, error: "must be the push service's URL" }).max(2048)),
  keys: z.object({ p256dh: pushKey(p256dhProblem), auth: pushKey(authProblem) }),
  deviceName: onlyStrings(z.string().trim().min(1, "is required").max(100, "must be at most 100 characters")),
});

export type DeviceView = Subscription & { filterList: Filters; tagList: Record<string, string> | null };

const viewDevice = (d: Subscription): DeviceView => ({
  ...d,
  filterList: d.filters ? (JSON.parse(d.filters) as Filters) : null,
  tagList: d.tags ? (JSON.parse(d.tags) as Record<string, string>) : null,
});

/** "plan:pro env:prod" (commas or spaces between pairs) as tags a device's events must have. */
function parseTagPairs(text: string): Record<string, string> | null {
  const tags: Record<string, string> = {};
  for (const pair of text.split(/[\s,]+/).filter(Boolean)) {
    const at = pair.indexOf(":");
    if (at < 1)
      throw ValidationError.field("tags", "invalid_format", `tags: "${pair}" is not key:value (such as plan:pro)`);
    tags[pair.slice(0, at)] = pair.slice(at + 1);
  }
  return validate(routeFilter, { tags })?.tags ?? null;
}

export function deviceService(store: Store, outbound: OutboundRules) {
  async function ownDevice(user: User, id: number): Promise<Subscription> {
    const device = await store.notifications.subscription(id);
    if (!device || device.userId !== user.id) throw new NotFound("That device is not registered (any more).");
    return device;
  }

  return {
    /** A push endpoint the outbound rules refuse (this machine, a private network, not https:) is a 400 naming it. */
    async register(user: User, input: unknown, now = Date.now()): Promise<Subscription> {
      const s = validate(subscriptionInput, input);
      const problem = await destinationProblem(outbound, "push", s.endpoint);
      if (problem) throw ValidationError.field("endpoint", "destination_refused", `endpoint: ${problem}`);
      return store.notifications.saveSubscription(
        { userId: user.id, endpoint: s.endpoint, p256dh: s.keys.p256dh, auth: s.keys.auth, deviceName: s.deviceName },
        now,
      );
    },

    /** A device seen again keeps its subscription alive (see pruneSubscriptions). */
    async refresh(user: User, endpoint: string, now = Date.now()): Promise<boolean> {
      return store.notifications.refreshSubscription(user.id, endpoint, now);
    },

    async list(user: User): Promise<DeviceView[]> {
      return (await store.notifications.subscriptionsOf(user.id)).map(viewDevice);
    },

    async get(user: User, id: number): Promise<DeviceView> {
      return viewDevice(await ownDevice(user, id));
    },

    async remove(user: User, id: number): Promise<void> {
      await ownDevice(user, id);
      await store.notifications.deleteSubscription(id);
    },

    /**
     * `choices` are "project" or "project/channel" strings; none, or all projects whole, means
     * everything. A project the user does not see is left out, as one that does not exist is (so
     * the device's list does not tell them it exists). `route`: tags as "key:value" pairs and the
     * least priority; absent, they stay.
     */
    async setFilters(
      user: User,
      id: number,
      choices: string[],
      route?: { tags: string; minPriority: number },
    ): Promise<void> {
      await ownDevice(user, id);
      if (route) {
        const tags = parseTagPairs(route.tags);
        const minPriority = validate(
          z.object({
            min_priority: z.coerce
              .number()
              .pipe(
                z
                  .number()
                  .refine((n) => n >= PRIORITY.min && n <= PRIORITY.max && Number.isInteger(n), "must be 1 to 5"),
              ),
          }),
          { min_priority: route.minPriority },
        ).min_priority;
        await store.notifications.setSubscriptionRoute(id, { tags: tags ? JSON.stringify(tags) : null, minPriority });
      }
      const byProject = new Map<string, string[] | null>();
      for (const choice of choices) {
        const [project, channel] = choice.split("/");
        if (!project || !reaches(user.projects, project) || !(await store.projects.findByName(project))) continue;
        if (!channel) byProject.set(project, null);
        else if (byProject.get(project) !== null) byProject.set(project, [...(byProject.get(project) ?? []), channel]);
      }
      const filters: Filters = byProject.size
        ? [...byProject].map(([project, channels]) => ({ project, channels }))
        : null;
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
