// Live views at a fixed cost. Streams that show the same view (one project's feed with the same
// filters, say) form a group. A published message is only noted by the groups that may want it;
// nothing is rendered or written then. Groups flush together at most once per interval (250 ms by
// default; a message after a quiet moment goes out at once): each group picks what to send from
// what it noted (a dashboard the newest few events and a count of the rest, a stream everything),
// renders it once, and writes that one chunk to each of its streams. So the cost of ingest does
// not grow with the number of open dashboards: a thousand dashboards on one page cost one render
// and a thousand socket writes per flush, not per event.
import { type Clock, systemClock, type Timer } from "../clock.ts";
import { log } from "../logger.ts";
import type { Hub, LiveMessage } from "./hub.ts";

/** A frame ready to write, and the event id it carries (0 for none), so a resumed stream can skip what its backlog sent. */
export type Framed = { frame: Uint8Array; id: number };

/** Renders a message once per flush and format, however many groups send it. */
export type Render = (message: LiveMessage, format: string, render: () => Uint8Array) => Uint8Array;

/**
 * What a group of streams shows. Equal keys show equal frames. Between flushes a view keeps only
 * what it will send (`keep` into its own `pending`), so a burst costs it no more memory than one
 * flush's worth: a dashboard its newest few events, a stream every event.
 */
export type View<P = unknown> = {
  key: string;
  /** Only messages of this project reach the view (undefined: every project). */
  projectId?: number;
  /** Whether notify events of every project reach it too (a dashboard's toasts). */
  toasts?: boolean;
  /** What it keeps between flushes, empty. */
  start(): P;
  /** Cheap, at publish time: keeps what it wants of this message; returns whether it kept anything. */
  keep(pending: P, message: LiveMessage): boolean;
  /** At flush time: the frames for what it kept, oldest first. */
  frames(pending: P, render: Render): Framed[];
};

/** A stream in a group; `deliver` writes the group's chunk (or, after a resume, only the frames it lacks). */
export type Member = { deliver: (chunk: Uint8Array, frames: Framed[]) => void };

class Group {
  readonly members = new Set<Member>();
  pending: unknown;
  constructor(readonly view: View) {
    this.pending = view.start();
  }
}

/** The time flushes go by: the monotonic clock and the system's timers, unless a test gives its own. */
const monotonic: Pick<Clock, "now" | "after"> = { now: () => performance.now(), after: systemClock.after };

export class Fanout {
  private readonly groups = new Map<string, Group>();
  /** Groups by the project they show ("*" for all), so a message is offered only to groups that may want it. */
  private readonly byProject = new Map<number | "*", Set<Group>>();
  private readonly toastGroups = new Set<Group>();
  private readonly dirty = new Set<Group>();
  private timer: Timer | null = null;
  private lastFlush = -Infinity;
  private readonly unsubscribe: () => void;
  flushes = 0;

  constructor(
    hub: Hub,
    private readonly intervalMs: number,
    private readonly clock: Pick<Clock, "now" | "after"> = monotonic,
  ) {
    this.unsubscribe = hub.subscribe((message) => this.note(message));
  }

  /** Joins `member` to the group showing `view`; returns how to leave. */
  join<P>(view: View<P>, member: Member): () => void {
    let group = this.groups.get(view.key);
    if (!group) {
      group = new Group(view as View);
      this.groups.set(view.key, group);
      this.index(group, true);
    }
    const joined = group;
    joined.members.add(member);
    return () => {
      if (!joined.members.delete(member) || joined.members.size) return;
      this.index(joined, false);
      this.dirty.delete(joined);
      if (this.groups.get(view.key) === joined) this.groups.delete(view.key);
    };
  }

  /** Streams following a view. */
  get size(): number {
    let n = 0;
    for (const group of this.groups.values()) n += group.members.size;
    return n;
  }

  get groupCount(): number {
    return this.groups.size;
  }

  close(): void {
    this.unsubscribe();
    this.timer?.cancel();
    this.timer = null;
  }

  private index(group: Group, add: boolean): void {
    const key = group.view.projectId ?? "*";
    let set = this.byProject.get(key);
    if (!set) this.byProject.set(key, (set = new Set()));
    if (add) set.add(group);
    else {
      set.delete(group);
      if (!set.size) this.byProject.delete(key);
    }
    if (group.view.toasts) {
      if (add) this.toastGroups.add(group);
      else this.toastGroups.delete(group);
    }
  }

  private note(message: LiveMessage): void {
    const projectId =
      message.type === "event"
        ? message.event.projectId
        : message.type === "metric"
          ? message.metric.projectId
          : message.projectId;
    const offered = new Set<Group>(); // a dashboard of this project with toasts is met twice
    const offer = (group: Group) => {
      if (offered.has(group)) return;
      offered.add(group);
      if (group.view.keep(group.pending, message)) this.dirty.add(group);
    };
    for (const group of this.byProject.get(projectId) ?? []) offer(group);
    for (const group of this.byProject.get("*") ?? []) offer(group);
    if (message.type === "event" && message.event.notify && !message.event.historical)
      for (const group of this.toastGroups) offer(group);
    if (this.dirty.size) this.schedule();
  }

  /** At most one flush per interval; the first message after a quiet interval goes out at once. */
  private schedule(): void {
    if (this.timer) return;
    const wait = Math.max(0, this.lastFlush + this.intervalMs - this.clock.now());
    this.timer = this.clock.after(wait, () => {
      this.timer = null;
      this.flush();
    });
  }

  /** Renders each dirty group's frames once and writes them to its streams. */
  flush(): void {
    this.lastFlush = this.clock.now();
    this.flushes++;
    const groups = [...this.dirty];
    this.dirty.clear();
    const rendered = new Map<LiveMessage, Map<string, Uint8Array>>();
    const render: Render = (message, format, make) => {
      let formats = rendered.get(message);
      if (!formats) rendered.set(message, (formats = new Map()));
      let frame = formats.get(format);
      if (!frame) formats.set(format, (frame = make()));
      return frame;
    };
    for (const group of groups) {
      const pending = group.pending;
      group.pending = group.view.start();
      let frames: Framed[];
      try {
        frames = group.view.frames(pending, render);
      } catch (error) {
        log.error("a live view failed to render", { view: group.view.key, error }); // one broken view must not stop the others
        continue;
      }
      if (!frames.length) continue;
      const chunk = frames.length === 1 ? frames[0]!.frame : Buffer.concat(frames.map((f) => f.frame));
      for (const member of group.members) member.deliver(chunk, frames);
    }
  }
}
