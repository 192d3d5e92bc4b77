// The users search's index on SQLite (what it matches: store/user-search.ts). It lives in search.db
// beside the events' and is kept by the same indexer thread (search.ts, search-worker.ts), so
// identify pays for one small row in profile_changes (written by triggers) and never for indexing
// a profile's text: with 100 properties of 600 characters, some 9,000 words.
//
// A row per user and part (user_parts: a property, or "" for the id) in one contentless FTS5
// table, its key's words in `key` and its value's in `value`: a plain word is looked for in both,
// the words of `key:value` in the value of that property's row. A row per property, not per user:
// a change to one property of a hundred rewrites that one row (a hash of each value says which
// changed), and the table's terms are the words people write, whatever the keys.
//
// The indexer follows profile_changes (a changed or deleted profile, a deleted project) and the
// users of newly indexed events, and on its first run (an upgrade, or a search.db rebuilt after a
// restore) indexes every profile and every user of the events once.
import type { Database } from "bun:sqlite";
import type { Properties } from "../../model/profile.ts";
import { searchTokens } from "../search-tokens.ts";
import { type UserAtom, valueText } from "../user-search.ts";

export const USERS_SCHEMA = [
  "CREATE TABLE IF NOT EXISTS user_docs (id INTEGER PRIMARY KEY, project_id INTEGER NOT NULL, user_id TEXT NOT NULL, UNIQUE (project_id, user_id))",
  "CREATE TABLE IF NOT EXISTS user_parts (id INTEGER PRIMARY KEY, doc INTEGER NOT NULL, part TEXT NOT NULL, hash TEXT NOT NULL, UNIQUE (doc, part))",
  "CREATE VIRTUAL TABLE IF NOT EXISTS users_fts USING fts5(key, value, content='', contentless_delete=1, tokenize='unicode61 remove_diacritics 2')",
];

/**
 * A search's conditions as FTS5 queries of user rows, one per part they concern (null: any part):
 * each plain word in any row's key or value, the words of `key:value` in that property's value
 * (and its key's words in its key, which narrows the rows to check). A user matches when every
 * condition finds one of their rows; a condition with no query is any row of that part.
 */
export function usersMatch(atoms: UserAtom[]): { part: string | null; match: string | null }[] {
  const phrase = (a: UserAtom) => `"${a.word}"${a.prefix ? "*" : ""}`;
  const list: { part: string | null; match: string | null }[] = atoms
    .filter((a) => a.key === null)
    .map((a) => ({ part: null, match: phrase(a) }));
  const byKey = Map.groupBy(
    atoms.filter((a) => a.key !== null),
    (a) => a.key!,
  );
  for (const [key, keyed] of byKey) {
    const terms = [
      ...searchTokens(key).map((w) => `key : "${w}"`),
      ...keyed.filter((a) => a.word !== null).map((a) => `value : ${phrase(a)}`),
    ];
    list.push({ part: key, match: terms.length ? terms.join(" AND ") : null });
  }
  return list;
}

/** Profile text indexed per step at most (some hundreds of milliseconds of work): a step is one transaction of search.db. */
const TEXT_PER_STEP = 8_000_000;

type Fill = { phase: "profiles" | "events"; projectId: number; userId: string };

/** The indexer's part for users, on its connection (search.db, the database attached as ev). */
export function usersIndexer(db: Database) {
  const state = db.query<{ value: string }, [string]>("SELECT value FROM search_state WHERE key = ?");
  const save = db.query<never, [string, string]>(
    "INSERT INTO search_state (key, value) VALUES (?1, ?2) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
  );
  const profile = db.query<{ properties: string }, [number, string]>(
    "SELECT properties FROM ev.profiles WHERE project_id = ? AND user_id = ?",
  );
  const hasEvents = db.query<{ one: number }, [number, string]>(
    "SELECT 1 AS one FROM ev.events WHERE project_id = ? AND user_id = ? LIMIT 1",
  );
  const docOf = db.query<{ id: number }, [number, string]>(
    "SELECT id FROM user_docs WHERE project_id = ? AND user_id = ?",
  );
  const newDoc = db.query<{ id: number }, [number, string]>(
    "INSERT INTO user_docs (project_id, user_id) VALUES (?, ?) RETURNING id",
  );
  const dropDoc = db.query<never, [number]>("DELETE FROM user_docs WHERE id = ?");
  const docsOfProject = db.query<{ id: number }, [number]>("SELECT id FROM user_docs WHERE project_id = ?");
  type Part = { id: number; part: string; hash: string };
  const partsOf = db.query<Part, [number]>("SELECT id, part, hash FROM user_parts WHERE doc = ?");
  const newPart = db.query<{ id: number }, [number, string, string]>(
    "INSERT INTO user_parts (doc, part, hash) VALUES (?, ?, ?) RETURNING id",
  );
  const rehash = db.query<never, [string, number]>("UPDATE user_parts SET hash = ? WHERE id = ?");
  const dropPart = db.query<never, [number]>("DELETE FROM user_parts WHERE id = ?");
  const write = db.query<never, [number, string, string]>("INSERT INTO users_fts (rowid, key, value) VALUES (?, ?, ?)");
  const unwrite = db.query<never, [number]>("DELETE FROM users_fts WHERE rowid = ?");
  // FTS5 writes its pending terms out whenever another statement of the transaction opens a
  // savepoint (an insert into user_parts does): written between those, every row would make a
  // segment of its own, some ten times the work. So they wait for the end of the step, in order.
  let pending: ([number] | [number, string, string])[] = [];
  const later = (...op: [number] | [number, string, string]) => void pending.push(op);
  function flush(): void {
    for (const op of pending) {
      if (op.length === 1) unwrite.run(op[0]);
      else write.run(...op);
    }
    pending = [];
  }
  type Change = { seq: number; projectId: number; userId: string | null };
  const changes = db.query<Change, [number, number]>(
    "SELECT seq, project_id AS projectId, user_id AS userId FROM ev.profile_changes WHERE seq > ? ORDER BY seq LIMIT ?",
  );
  const lastChange = db.query<{ seq: number }, []>("SELECT seq FROM ev.sqlite_sequence WHERE name = 'profile_changes'");
  type Pair = { projectId: number; userId: string };
  const eventUsers = db.query<Pair, [number, number]>(
    "SELECT DISTINCT project_id AS projectId, user_id AS userId FROM ev.events WHERE id > ?1 AND id <= ?2 AND user_id IS NOT NULL",
  );
  const profilesAfter = db.query<Pair & { properties: string }, [number, string, number]>(
    "SELECT project_id AS projectId, user_id AS userId, properties FROM ev.profiles WHERE (project_id, user_id) > (?1, ?2) ORDER BY project_id, user_id LIMIT ?3",
  );
  // One seek in the events' user index per user, however many events each has.
  const eventUserAfter = db.query<Pair, [number, string]>(
    "SELECT project_id AS projectId, user_id AS userId FROM ev.events INDEXED BY events_user_ts WHERE user_id IS NOT NULL AND (project_id, user_id) > (?1, ?2) ORDER BY project_id, user_id LIMIT 1",
  );

  function remove(doc: number): void {
    for (const { id } of partsOf.all(doc)) {
      later(id);
      dropPart.run(id);
    }
    dropDoc.run(doc);
  }

  /** Makes the user's rows what their profile and events say now; returns the text read. */
  function put(
    projectId: number,
    userId: string,
    properties = profile.get(projectId, userId)?.properties ?? null,
  ): number {
    const doc = docOf.get(projectId, userId)?.id;
    if (properties === null && !hasEvents.get(projectId, userId)) {
      if (doc !== undefined) remove(doc);
      return 0;
    }
    const wanted: [string, string][] = [["", userId]];
    for (const [key, value] of Object.entries(properties === null ? {} : (JSON.parse(properties) as Properties)))
      if (value !== null) wanted.push([key, valueText(value)]);
    const id = doc ?? newDoc.get(projectId, userId)!.id;
    const had = new Map(doc === undefined ? [] : partsOf.all(doc).map((p) => [p.part, p]));
    for (const [part, text] of wanted) {
      const hash = String(Bun.hash(text));
      const old = had.get(part);
      had.delete(part);
      if (old?.hash === hash) continue;
      if (old) {
        rehash.run(hash, old.id);
        later(old.id);
      }
      later(old?.id ?? newPart.get(id, part, hash)!.id, part, text);
    }
    for (const gone of had.values()) {
      later(gone.id);
      dropPart.run(gone.id);
    }
    return properties?.length ?? userId.length;
  }

  /** Everyone once: the profiles, then the users of the events (those without a document yet). Null when done. */
  function fill(at: Fill, limit: number, budget: number): { done: number; at: Fill | null } {
    let done = 0;
    while (at.phase === "profiles") {
      const rows = profilesAfter.all(at.projectId, at.userId, limit - done);
      for (const row of rows) {
        if (budget <= 0) return { done, at };
        budget -= put(row.projectId, row.userId, row.properties);
        at = { phase: "profiles", projectId: row.projectId, userId: row.userId };
        done++;
      }
      if (done >= limit) return { done, at };
      at = { phase: "events", projectId: 0, userId: "" };
    }
    for (; done < limit; done++) {
      const next = eventUserAfter.get(at.projectId, at.userId);
      if (!next) return { done, at: null };
      if (!docOf.get(next.projectId, next.userId)) put(next.projectId, next.userId);
      at = { phase: "events", ...next };
    }
    return { done, at };
  }

  return {
    /** Gives the users of the events in (from, through] who have none a document. */
    fromEvents(from: number, through: number): void {
      for (const { projectId, userId } of eventUsers.all(from, through))
        if (!docOf.get(projectId, userId)) put(projectId, userId);
      flush();
    },

    /** Follows up to `limit` changes (and fills the index on its first run); returns how many, or `limit` when there is more. */
    step(limit: number): number {
      let budget = TEXT_PER_STEP;
      let done = 0;
      let filling = state.get("users_fill")?.value;
      if (filling === undefined) {
        // Changes up to now are covered by the fill, which reads every profile after this moment.
        save.run("users_through", String(lastChange.get()?.seq ?? 0));
        filling = JSON.stringify({ phase: "profiles", projectId: 0, userId: "" } satisfies Fill);
      }
      if (filling !== "done") {
        const filled = fill(JSON.parse(filling) as Fill, limit, budget);
        flush();
        save.run("users_fill", filled.at ? JSON.stringify(filled.at) : "done");
        return filled.at ? limit : filled.done;
      }
      const from = Number(state.get("users_through")?.value ?? 0);
      const list = changes.all(from, limit);
      const seen = new Set<string>();
      let through = from;
      for (const change of list) {
        if (budget <= 0) break;
        if (change.userId === null) {
          for (const { id } of docsOfProject.all(change.projectId)) remove(id);
        } else if (!seen.has(`${change.projectId}:${change.userId}`)) {
          seen.add(`${change.projectId}:${change.userId}`);
          budget -= put(change.projectId, change.userId);
        }
        through = change.seq;
        done++;
      }
      flush();
      if (through > from) save.run("users_through", String(through));
      return budget <= 0 ? limit : done;
    },
  };
}
