// Catching a reconnecting stream up. A client sends the id of the last event it saw
// (Last-Event-ID); it gets what it missed, in order, once, then live events. The work is bounded
// whatever it asks: the replay reads pages of the store, waits for each to reach the socket
// before the next and lets other requests go first in between, gives up past a window of ids or a
// number of events, and an id the server
// never handed out (a database restored from an older backup) counts as "from now". Giving up is
// said with a reset frame, so the client knows to re-read instead of believing it saw everything.
import type { EventFilter } from "../model/filter.ts";
import type { FeedService } from "../domain/feed.ts";
import type { View } from "../live/fanout.ts";
import type { Stream } from "./sse.ts";
import type { StoredEvent } from "../model/event.ts";

/** A stream that missed more than this many ids (of any project) starts again from now. */
export const RESUME_WINDOW = 100_000;

const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));
const PAGE = 500;

export type ResetReason = "too_far_behind" | "too_many" | "unknown_id";

export type ResumeOptions = {
  feed: FeedService;
  view: View;
  filter: EventFilter;
  /** The client's Last-Event-ID, or null for a fresh stream. */
  lastSeen: number | null;
  /** Most events replayed before giving up. */
  limit: number;
  /** Most ids behind the newest a stream may be to be replayed (RESUME_WINDOW unless smaller). */
  window?: number;
  encode: (event: StoredEvent) => Uint8Array;
  /** The frame that tells the client it did not get everything, continuing from `newest`. */
  reset: (newest: number, reason: ResetReason) => Uint8Array;
};

export async function resume(
  stream: Stream,
  { feed, view, filter, lastSeen, limit, window = RESUME_WINDOW, encode, reset }: ResumeOptions,
): Promise<void> {
  // Live frames are kept from before the first read: an event that commits while the backlog is
  // read is in the backlog, or in what is kept, or both (then sent once).
  const live = stream.follow(view);
  // A fresh stream sent no backlog, so nothing it keeps is a repeat: everything since it joined goes out.
  if (lastSeen === null) return live(0);
  let newest = await feed.newestId();
  if (lastSeen > newest) {
    stream.send(reset(newest, "unknown_id"));
    return live(newest);
  }
  let read = lastSeen;
  let replayed = 0;
  for (;;) {
    if (newest - lastSeen > window) {
      stream.send(reset(newest, "too_far_behind"));
      return live(newest);
    }
    const page = await feed.missed(filter, read, newest, PAGE);
    replayed += page.events.length;
    if (replayed > limit) {
      stream.send(reset(newest, "too_many"));
      return live(newest);
    }
    for (const event of page.events) stream.send(encode(event));
    read = page.through;
    if (read >= newest) return live(read);
    if (!(await stream.drained())) return;
    // Other requests go first between pages, even when a page matched nothing (and so waited for nothing).
    await nextTurn();
    newest = await feed.newestId();
  }
}
