// User and group traits (identify, group): properties merged as a JSON merge patch.

export type Properties = Record<string, string | number | boolean | null>;

export type Profile = {
  projectId: number;
  userId: string;
  properties: Properties;
  createdAt: number;
  updatedAt: number;
};

/**
 * A user of a project as the users page lists them: everyone with events, and everyone identified.
 * Seen means an event or an identify call: firstSeen and lastSeen are the earliest and newest of
 * either; `events` counts events only.
 */
export type UserSummary = {
  userId: string;
  firstSeen: number;
  lastSeen: number;
  events: number;
  properties: Properties | null;
};

/**
 * A term of a users search as typed: `key:value` (the key as sent to /v1/identify) or a plain word
 * (key null). Stores match them by the words they hold (store/user-search.ts).
 */
export type UserTerm = { key: string | null; text: string };

/**
 * Which users, newest activity first (lastSeen, then user id, both descending). Every term must
 * match: a plain word the user id or any property's key or value, `key:value` that property's
 * value. `before`: only users after that one in this order.
 */
export type UserFilter = {
  projectId: number;
  /** In the order typed (the last word of the search matches as a prefix). */
  terms?: UserTerm[];
  before?: { lastSeen: number; userId: string };
  limit: number;
};
