// What an alert's notices say: the event recorded in the project's `alerts` channel for each change
// of a rule's state (firing, resolved), for a repeat while it keeps firing, and for a test. Its name
// says what happened in a line, for a push notification; its description has the numbers, in the
// words of the rule's kind (alert-kinds/).
import type { Alert } from "../model/alert.ts";
import type { Tags } from "../model/event.ts";
import { kindOf } from "./alert-kinds/index.ts";
import type { Facts } from "./alert-kinds/kind.ts";
import type { Hush } from "./quiet.ts";

/** `notify`: false for a change recorded but told to nobody (quiet.ts); a notice otherwise. */
export type Notice = { event: string; description: string; icon: string; tags: Tags; notify?: boolean };

export function notice(a: Alert, what: "firing" | "resolved" | "repeat", facts: Facts, now: number): Notice {
  const firing = what !== "resolved";
  const tags: Tags = {
    alert: a.id,
    state: firing ? "firing" : "resolved",
    kind: a.kind,
    ...(what === "repeat" ? { repeat: true } : {}),
  };
  const words = kindOf(a).notice(a, firing, what === "repeat" ? "still " : "", facts, now);
  return { ...words, icon: firing ? "🚨" : "✅", tags };
}

/** The change recorded without notify, tagged with why it was not told (quiet.ts's reason). */
export function quietly(n: Notice, why: Hush | null): Notice {
  return { ...n, notify: false, tags: { ...n.tags, quiet: why ?? "held" } };
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
