// Which events a feed, a search or a stream shows. One type for both ways of asking: the store
// turns it into SQL (store/events.ts), and live views check it against each new event in memory
// (domain/filter.ts). A property test holds the two to the same answers.

export type EventFilter = {
  projectId?: number;
  /** A channel of projectId, by name (a stream may wait for a channel that has no event yet). */
  channel?: string;
  userId?: string;
  /** The event's name, exactly. */
  event?: string;
  /** [key, value] pairs that must all match; values as stored (numbers and booleans as JSON text). */
  tags?: [string, string][];
  /** Folded search words (store/search-tokens.ts): all must appear, the last one as a prefix. */
  terms?: string[];
  /** Unix ms, inclusive. */
  from?: number;
  /** Unix ms, exclusive. */
  to?: number;
  /** Only events that arrived live: no historical (timestamped) ones. */
  liveOnly?: boolean;
};

/** A position in a feed: events strictly older than (ts, id) come next. */
export type Position = { ts: number; id: number };
