// The users search by words, as both stores index it. A user's searchable text is their id and
// their properties' keys and values; it is folded into words exactly as events are (search-tokens.ts),
// and a search matches as the event search does: every word must be there, the last one as the
// start of a word. A plain word may be in the id, a key or a value; the words of `key:value` in
// that property's value. The index itself is each store's (store/sqlite/users-index.ts, store/pg/
// users-search.ts): profiles change, so what matches follows identify and project deletion.
import type { Properties, UserTerm } from "../model/profile.ts";
import { searchTokens } from "./search-tokens.ts";

/**
 * One condition of a search, all of which must hold. `key` null: `word` is among the words of the
 * user's id or of any property's key or value; otherwise among that property's value's words, or,
 * with no word (`email:""`, `email:@`), the user has that property.
 */
export type UserAtom = { key: string | null; word: string | null; prefix: boolean };

/** The conditions of a search as typed; none when it holds no word (then it lists everyone, as the event search does). */
export function userAtoms(terms: UserTerm[] = []): UserAtom[] {
  const atoms: UserAtom[] = [];
  for (const { key, text } of terms) {
    const words = searchTokens(text);
    if (key !== null && !words.length) atoms.push({ key, word: null, prefix: false });
    for (const word of words) atoms.push({ key, word, prefix: false });
  }
  const last = atoms.findLast((a) => a.word !== null);
  if (last) last.prefix = true;
  return atoms;
}

/** A property's value as text: strings as sent, numbers and booleans as their JSON. */
export const valueText = (value: Properties[string]): string =>
  typeof value === "string" ? value : JSON.stringify(value);

/** PostgreSQL keeps a word of at most 2047 bytes; a search is at most 200 characters, so a longer word is matched by its start. */
const MAX_WORD = 500;

/** The distinct folded words of `text`, each cut to what an index keeps. */
export function wordsOf(text: string): string[] {
  return [...new Set(searchTokens(text).map((w) => w.slice(0, MAX_WORD)))];
}
