// The users page: a project's users, newest activity first, searched by id or property, in keyset
// pages behind an opaque cursor.
//
// The search: terms separated by spaces, every one must match. `key:value` matches the property
// `key` (as sent to /v1/identify); any other word matches the user id or any property's key or
// value. Quotes keep spaces and colons in a value or word: `name:"Ann Lee"`, `"auth0:42"`. Text
// matches by words, as the event search does (store/user-search.ts).
import { BadRequest } from "../errors.ts";
import type { UserFilter, UserSummary, UserTerm } from "../model/profile.ts";
import type { Project } from "../model/project.ts";
import type { Store } from "../store/store.ts";

export const USERS_PAGE = 50;
const MAX_QUERY = 200;
const MAX_TERMS = 8;

export type UserPage = { users: UserSummary[]; nextCursor: string | null };

/** A property term (its value quoted, or up to the next space), a quoted word, or a word. */
const TERM = /(?<![^\s])([^\s:"]{1,64}):(?:"([^"]*)"|(\S+))|"([^"]*)"|(\S+)/g;

export function parseUserSearch(q: string): UserTerm[] {
  if (q.length > MAX_QUERY)
    throw new BadRequest(`the search is ${q.length} characters long; keep it to ${MAX_QUERY}`, "invalid_search");
  if (q.includes("\u0000")) throw new BadRequest("the search holds a NUL character; remove it", "invalid_search");
  const terms: UserTerm[] = [];
  for (const [, key, quoted, plain, quotedWord, word] of q.matchAll(TERM)) {
    if (key !== undefined) terms.push({ key, text: quoted ?? plain! });
    else if ((quotedWord ?? word)!.length) terms.push({ key: null, text: (quotedWord ?? word)! });
  }
  if (terms.length > MAX_TERMS)
    throw new BadRequest(`the search has ${terms.length} terms; use at most ${MAX_TERMS}`, "invalid_search");
  return terms;
}

export function encodeUserCursor(u: Pick<UserSummary, "lastSeen" | "userId">): string {
  return Buffer.from(`${u.lastSeen}:${u.userId}`).toString("base64url");
}

export function decodeUserCursor(cursor: string): NonNullable<UserFilter["before"]> {
  const m = /^(-?\d{1,16}):([^]+)$/.exec(Buffer.from(cursor, "base64url").toString());
  if (!m || m[2]!.includes("\u0000"))
    throw new BadRequest(
      `cursor ${JSON.stringify(cursor.slice(0, 60))} is not valid; use the link to the next page as given`,
      "invalid_cursor",
    );
  return { lastSeen: Number(m[1]), userId: m[2]! };
}

export async function listUsers(
  store: Store,
  project: Project,
  query: { q?: string; cursor?: string; limit?: number },
): Promise<UserPage> {
  const terms = parseUserSearch((query.q ?? "").trim());
  const before = query.cursor ? decodeUserCursor(query.cursor) : undefined;
  const limit = query.limit ?? USERS_PAGE;
  const rows = await store.profiles.listUsers({ projectId: project.id, terms, before, limit: limit + 1 });
  const users = rows.slice(0, limit);
  const last = users.at(-1);
  return { users, nextCursor: rows.length > limit && last ? encodeUserCursor(last) : null };
}
