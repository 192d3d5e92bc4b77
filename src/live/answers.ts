// Answers shared by everyone looking: a dashboard card (a chart, a funnel, the activity chart) is
// worked out once per refresh, however many people have the page open. An answer stands until
// events of its project arrive, or for a minute (its range moves with the clock); while it is being
// worked out, everyone who asks waits for the same one. A page that follows new events (`live`)
// takes an answer up to `refreshMs` old even when events came since: so pinned cards follow new
// events at a fixed cost, at most one query per card per refresh, and a page opened or reloaded
// gets what is there now.
import type { Hub } from "./hub.ts";

const MAX_AGE_MS = 60_000;
const MAX_ENTRIES = 1000;

type Entry = { version: number; at: number; answer: Promise<unknown> };

export class SharedAnswers {
  private readonly versions = new Map<number, number>();
  private readonly entries = new Map<string, Entry>();
  /** Answers worked out, and answers given from what was kept (for tests and /metrics). */
  readonly stats = { computed: 0, shared: 0 };

  constructor(
    hub: Hub,
    private readonly refreshMs: number,
    private readonly now: () => number = Date.now,
  ) {
    hub.subscribe((message) => {
      if (message.type === "event")
        this.versions.set(message.event.projectId, (this.versions.get(message.event.projectId) ?? 0) + 1);
    });
  }

  /** The answer of `key` (a question about project `projectId`), worked out by `compute` when what is kept will not do. */
  get<T>(projectId: number, key: string, compute: () => Promise<T>, options: { live?: boolean } = {}): Promise<T> {
    const version = this.versions.get(projectId) ?? 0;
    const now = this.now();
    const kept = this.entries.get(key);
    if (kept && this.fresh(kept, version, now, options.live ?? false)) {
      this.stats.shared++;
      return kept.answer as Promise<T>;
    }
    this.stats.computed++;
    const answer = compute();
    const entry = { version, at: now, answer };
    this.entries.delete(key); // re-inserted last: the map's order is the order of use
    this.entries.set(key, entry);
    if (this.entries.size > MAX_ENTRIES) this.entries.delete(this.entries.keys().next().value!);
    // A failure is not kept: the next ask tries again.
    answer.catch(() => {
      if (this.entries.get(key) === entry) this.entries.delete(key);
    });
    return answer;
  }

  private fresh(entry: Entry, version: number, now: number, live: boolean): boolean {
    const age = now - entry.at;
    if (live && age < this.refreshMs) return true;
    return entry.version === version && age < MAX_AGE_MS;
  }
}
