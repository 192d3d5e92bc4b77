// Events: what apps, scripts and devices send, as every layer sees them.

export type TagValue = string | number | boolean;
export type Tags = Record<string, TagValue>;

/** An event about to be stored: where, what, and when (Unix ms). */
export type NewEvent = {
  projectId: number;
  project: string;
  channelId: number;
  channel: string;
  name: string;
  description: string | null;
  icon: string | null;
  notify: boolean;
  parser: "text" | "markdown";
  userId: string | null;
  tags: Tags | null;
  /** Event time: the client's timestamp, else the receive time. */
  ts: number;
  receivedAt: number;
  /** Sent with a timestamp: stored at that time, never notified, never pushed to the top of a live feed. */
  historical: boolean;
  /** 1 (min) to 5 (urgent); 3 unless the client said otherwise (and when absent here). */
  priority?: number;
};

/** A stored event: its id grows in commit order. */
export type StoredEvent = NewEvent & { id: number; priority: number };

/** What an event says, apart from where and when. */
export type EventContent = Pick<NewEvent, "name" | "description" | "icon" | "parser" | "userId" | "tags">;

/** A tag's value as stored and searched: strings as sent, numbers and booleans as their JSON text. */
export function tagText(value: TagValue): string {
  return typeof value === "string" ? value : JSON.stringify(value);
}
