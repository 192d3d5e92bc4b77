// The users search's index on PostgreSQL (what it matches: store/user-search.ts): user_search, a
// row per user and part (a property, or "" for the id) with that part's folded words and their
// tsvector, GIN-indexed (schema.ts). identify writes the rows of the properties it sends in its own
// statement, an event with a user id the id's row (events.ts); a project's rows go with it
// (ON DELETE CASCADE). A property's key's words are kept marked with "_" (no folded word starts
// with it), so `key:value` matches the value's words only, while a plain word finds keys too.
import type { SQL as BunSql } from "bun";
import { type SQL, sql } from "drizzle-orm";
import type { Properties } from "../../model/profile.ts";
import { type UserAtom, valueText, wordsOf } from "../user-search.ts";

type Part = { part: string; words: string };

/** The id's row's words. */
export const idWords = (userId: string): string => wordsOf(userId).join(" ");

const propertyPart = (key: string, value: Properties[string]): Part => ({
  part: key,
  words: [...wordsOf(valueText(value)), ...wordsOf(key).map((w) => `_${w}`)].join(" "),
});

/** The rows a patch (as sent to identify) writes, with the id's, and the properties it removes. */
export function patchParts(userId: string, patch: Properties): { parts: Part[]; gone: string[] } {
  const parts: Part[] = [{ part: "", words: idWords(userId) }];
  const gone: string[] = [];
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) gone.push(key);
    else parts.push(propertyPart(key, value));
  }
  return { parts, gone };
}

const quoted = (word: string) => `'${word.replace(/\\/g, "\\\\").replace(/'/g, "''")}'`;

/**
 * A search's conditions as queries of user_search, one per part they concern: each plain word in
 * any of a user's rows (as a word, or a key's marked word), the words of `key:value` in that
 * property's row. A user matches when every query finds one of their rows.
 */
export function conditions(atoms: UserAtom[]): Condition[] {
  const star = (a: UserAtom) => (a.prefix ? ":*" : "");
  const list: Condition[] = atoms
    .filter((a) => a.key === null)
    .map((a) => ({ part: null, query: `${quoted(a.word!)}${star(a)} | ${quoted(`_${a.word}`)}${star(a)}` }));
  const byKey = Map.groupBy(
    atoms.filter((a) => a.key !== null),
    (a) => a.key!,
  );
  for (const [key, keyed] of byKey) {
    const words = keyed.filter((a) => a.word !== null).map((a) => `${quoted(a.word!)}${star(a)}`);
    // With no word to look for, the key's own words find the candidates (`part` decides).
    if (!words.length) words.push(...wordsOf(key).map((w) => quoted(`_${w}`)));
    list.push({ part: key, query: words.length ? words.join(" & ") : null });
  }
  return list;
}

export type Condition = { part: string | null; query: string | null };

/** The condition on a row of user_search (named `as`) of the project. */
export function rowsOf(projectId: number, { part, query }: Condition, as = "s"): SQL {
  const s = sql.raw(as);
  return sql`${s}.project_id = ${projectId}${part === null ? sql`` : sql` and ${s}.part = ${part}`}${query === null ? sql`` : sql` and ${s}.search @@ ${query}::tsquery`}`;
}

/** The rows the GIN index finds for a condition, counted up to `cap` (null: it has no words to look for). */
export function countOf(projectId: number, condition: Condition, cap: number): SQL {
  if (condition.query === null) return sql`select null::bigint`;
  return sql`select count(*) from (select 1 from user_search s where ${rowsOf(projectId, condition)} limit ${cap}) c`;
}

/**
 * Whether the user `id` (a column of the query around it) has a row that meets the condition: their
 * rows, by the primary key (`offset 0` keeps the planner from reading every match to join them).
 */
export function holds(projectId: number, condition: Condition, id: SQL): SQL {
  return sql`exists (select 1 from user_search s where ${rowsOf(projectId, condition)} and s.user_id = ${id} offset 0)`;
}

const FILL_BATCH = 500;

/**
 * Indexes what the database held before user_search existed: every profile, and the id of every
 * user of the events. Run by the migration that makes the table, in its transaction.
 */
export async function fillUserSearch(tx: BunSql): Promise<void> {
  type Row = { project_id: number; user_id: string; properties?: string };
  const insert = (rows: (Part & { project_id: number; user_id: string })[]) =>
    tx`insert into user_search (project_id, user_id, part, words)
       select * from jsonb_to_recordset(${JSON.stringify(rows)}::text::jsonb) as t(project_id integer, user_id text, part text, words text)
       on conflict do nothing`;
  for (let at: Row = { project_id: 0, user_id: "" }; ; ) {
    const rows: Row[] =
      await tx`select project_id, user_id, properties from profiles where (project_id, user_id) > (${at.project_id}, ${at.user_id}) order by project_id, user_id limit ${FILL_BATCH}`;
    if (!rows.length) break;
    await insert(
      rows.flatMap((r) =>
        patchParts(r.user_id, JSON.parse(r.properties!) as Properties).parts.map((p) => ({
          project_id: r.project_id,
          user_id: r.user_id,
          ...p,
        })),
      ),
    );
    at = rows.at(-1)!;
  }
  for (let at: Row = { project_id: 0, user_id: "" }; ; ) {
    const rows: Row[] =
      await tx`select distinct project_id, user_id from events where user_id is not null and (project_id, user_id) > (${at.project_id}, ${at.user_id}) order by project_id, user_id limit ${FILL_BATCH}`;
    if (!rows.length) break;
    await insert(
      rows.map((r) => ({ project_id: r.project_id, user_id: r.user_id, part: "", words: idWords(r.user_id) })),
    );
    at = rows.at(-1)!;
  }
}
