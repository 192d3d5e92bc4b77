// User and group traits (identify, group): properties merged as a JSON merge patch.

export type Properties = Record<string, string | number | boolean | null>;

export type Profile = { projectId: number; userId: string; properties: Properties; createdAt: number; updatedAt: number };

/**
 * A user of a project as the users page lists them: everyone with events, and everyone identified.
 * Seen means an event or an identify call: firstSeen and lastSeen are the earliest and newest of
 * either; `events` counts events only.
 */
export type UserSummary = { userId: string; firstSeen: number; lastSeen: number; events: number; properties: Properties | null };

/**
 * Which users, newest activity first (lastSeen, then user id, both descending). Every term must
 * match, as a case-insensitive substring: `words` the user id or any property value, `properties`
 * that property's value (key as sent). `before`: only users after that one in this order.
 */
export type UserFilter = {
  projectId: number;
  words?: string[];
  properties?: [string, string][];
  before?: { lastSeen: number; userId: string };
  limit: number;
};
