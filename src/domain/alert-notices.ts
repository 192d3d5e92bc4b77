// What an alert's notices say: the event recorded in the project's `alerts` channel for each change
// of a rule's state (firing, resolved), for a repeat while it keeps firing, and for a test. Its name
// says what happened in a line, for a push notification; its description has the numbers.
import type { Alert } from "../model/alert.ts";
import type { Tags } from "../model/event.ts";
import { formatDuration, formatElapsed } from "./units.ts";

export type Notice = { event: string; description: string; icon: string; tags: Tags };

const at = (ms: number) => `${new Date(ms).toISOString().replace("T", " ").slice(0, 19)} UTC`;
const count = (n: number) => n.toLocaleString("en-US", { maximumFractionDigits: 10 });
const limit = (a: Alert) => (a.above !== null ? `above ${count(a.above)}` : `below ${count(a.below!)}`);

/** Which events a rule watches, in words: "#cron “Backup done” host=db1". */
export function describeFilter(a: Alert): string {
  const parts = [
    a.filter.channel ? `#${a.filter.channel}` : "",
    a.filter.event ? `“${a.filter.event}”` : "",
    ...Object.entries(a.filter.tags ?? {}).map(([k, v]) => `${k}=${v}`),
  ].filter(Boolean);
  return parts.length ? parts.join(" ") : "any event of the project";
}

/** When a rule expects events, in words. */
export function describeSchedule(a: Alert): string {
  const expected = a.cron ? `when “${a.cron}” says (${a.tz ?? "UTC"})` : `every ${formatDuration(a.period!)}`;
  return `${expected}, grace ${formatDuration(a.grace)}`;
}

type Facts = Record<string, number | string | null>;

export function notice(a: Alert, what: "firing" | "resolved" | "repeat", facts: Facts, now: number): Notice {
  const firing = what !== "resolved";
  const tags: Tags = {
    alert: a.id,
    state: firing ? "firing" : "resolved",
    kind: a.kind,
    ...(what === "repeat" ? { repeat: true } : {}),
  };
  const icon = firing ? "🚨" : "✅";
  const still = what === "repeat" ? "still " : "";
  if (a.kind === "absence") {
    const last = typeof facts.last === "number" ? facts.last : null;
    // Silence counts from the last event, or from when watching began when there was none.
    const silence = formatElapsed(now - (last ?? Number(facts.watched)));
    const seen =
      last === null
        ? `No matching event was stored in the ${silence} watched`
        : `The last matching event happened at ${at(last)}, ${silence} ago`;
    if (!firing)
      return {
        event: `${a.name} is back`,
        description: `${seen}: ${describeFilter(a)}. Expected ${describeSchedule(a)}.`,
        icon,
        tags,
      };
    return {
      event: `${a.name}: ${still}no event for ${silence}`,
      description: `${seen} (${describeFilter(a)}). Expected ${describeSchedule(a)}.`,
      icon,
      tags,
    };
  }
  if (a.kind === "count") {
    const n = Number(facts.count);
    const window = formatDuration(a.window!);
    const last = typeof facts.last === "number" ? ` The latest matching event happened at ${at(facts.last)}.` : "";
    const said = `${count(n)} ${n === 1 ? "event" : "events"} of ${describeFilter(a)} in the last ${window}; the rule fires ${limit(a)}.`;
    return {
      event: firing
        ? `${a.name}: ${still}${count(n)} ${n === 1 ? "event" : "events"} in ${window}`
        : `${a.name} is back: ${count(n)} in ${window}`,
      description: `${said}${firing ? last : ""}`,
      icon,
      tags,
    };
  }
  const value = Number(facts.value);
  const set = typeof facts.at === "number" ? ` (set at ${at(facts.at)})` : "";
  return {
    event: firing
      ? `${a.name}: ${still}${a.metric} is ${count(value)}`
      : `${a.name} is back: ${a.metric} is ${count(value)}`,
    description: `${a.metric} is ${count(value)}${set}; the rule fires ${limit(a)}.`,
    icon,
    tags,
  };
}

/** A notice sent on request, to see where a rule's notices go. */
export function testNotice(a: Alert): Notice {
  return {
    event: `Test: ${a.name}`,
    description: `A test of the alert rule “${a.name}”: its notices are events of this channel, with notify, delivered like this one.`,
    icon: "🔔",
    tags: { alert: a.id, state: "test", kind: a.kind },
  };
}
