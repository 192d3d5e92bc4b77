// Full-text search over event names and descriptions (and the users search's index: users-index.ts)
// lives in its own file beside the database
// (search.db), written by a worker thread (search-worker.ts). Keeping the FTS5 index there keeps
// its cost away from requests: indexing, and above all FTS5's merges of its segments, which take
// tens of milliseconds at a time once the index is large. (In the same file, the worker's write
// lock would stall the request thread's next commit for as long.)
//
// The worker reads new events, and the ids of deleted ones (a trigger records them in
// `deleted_events`), from the main database, and keeps its place in search_state. Search sees an
// event a moment (about 100 ms) after it was acknowledged. The index can always be rebuilt from
// the events: a search.db that does not belong to the database beside it (after a restore) is
// emptied and refilled.
import { Database } from "bun:sqlite";
import { randomUUID } from "node:crypto";
import { rmSync } from "node:fs";
import { dirname, join } from "node:path";
import { USERS_SCHEMA, usersIndexer } from "./users-index.ts";

export const SEARCH_FILE = "search.db";
const LINEAGE_KEY = "search.lineage";

export function searchPath(databasePath: string): string {
  return join(dirname(databasePath), SEARCH_FILE);
}

/**
 * Contentless (the text stays in events), with contentless_delete so deleted events can leave.
 * detail=none: the index keeps which events hold a word, not where: a search asks for words (each
 * a token of this tokenizer, the last as a prefix), never a phrase, and the index is less than
 * half the size (31 against 72 bytes an event, for the benchmark's events).
 */
const EVENTS_FTS =
  "CREATE VIRTUAL TABLE IF NOT EXISTS events_fts USING fts5(event, description, content='', contentless_delete=1, detail=none, tokenize='unicode61 remove_diacritics 2')";

const SCHEMA = [
  EVENTS_FTS,
  "CREATE TABLE IF NOT EXISTS search_state (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
  ...USERS_SCHEMA,
];

function openSearchFile(path: string): Database {
  const db = new Database(path, { create: true, strict: true });
  db.exec("PRAGMA journal_mode = WAL");
  db.exec("PRAGMA synchronous = NORMAL"); // rebuilt from the events if it is ever lost
  db.exec("PRAGMA busy_timeout = 5000");
  for (const statement of SCHEMA) db.exec(statement);
  return db;
}

/**
 * Makes sure search.db exists and belongs to `main` (the database at `databasePath`): created on
 * first use, emptied when it was built from another database or a later state of this one.
 */
export function prepareSearch(main: Database, databasePath: string): void {
  const path = searchPath(databasePath);
  const metaValue = main.query<{ value: string }, [string]>("SELECT value FROM meta WHERE key = ?");
  let lineage = metaValue.get(LINEAGE_KEY)?.value;
  if (!lineage) {
    lineage = randomUUID();
    main.query("INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT(key) DO NOTHING").run(LINEAGE_KEY, lineage);
    lineage = metaValue.get(LINEAGE_KEY)!.value;
  }
  const sequence = (table: string) =>
    main.query<{ seq: number }, [string]>("SELECT seq FROM sqlite_sequence WHERE name = ?").get(table)?.seq ?? 0;
  let db = openSearchFile(path);
  const state = (key: string) =>
    db.query<{ value: string }, [string]>("SELECT value FROM search_state WHERE key = ?").get(key)?.value;
  const stored = state("lineage");
  const belongs =
    (stored === undefined || stored === lineage) &&
    Number(state("indexed_through") ?? 0) <= sequence("events") &&
    Number(state("deleted_through") ?? 0) <= sequence("deleted_events") &&
    Number(state("users_through") ?? 0) <= sequence("profile_changes");
  if (!belongs) {
    db.close();
    for (const suffix of ["", "-wal", "-shm"]) rmSync(path + suffix, { force: true });
    db = openSearchFile(path);
  }
  db.query(
    "INSERT INTO search_state (key, value) VALUES ('lineage', ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
  ).run(lineage);
  // An index made before detail=none is made again from the events, in the background as any.
  const made = db.query<{ sql: string }, []>("SELECT sql FROM sqlite_master WHERE name = 'events_fts'").get()?.sql;
  if (made && !made.includes("detail=none")) {
    db.transaction(() => {
      db.exec("DROP TABLE events_fts");
      db.exec(EVENTS_FTS);
      const save = db.query(
        "INSERT INTO search_state (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
      );
      save.run("indexed_through", "0");
      save.run("deleted_through", String(sequence("deleted_events")));
    })();
  }
  db.close();
}

/** The indexer's connection: search.db, with the main database attached (as ev) to read from. */
export function openIndexerConnection(databasePath: string): Database {
  const db = openSearchFile(searchPath(databasePath));
  db.query("ATTACH DATABASE ? AS ev").run(databasePath);
  return db;
}

/** Brings the index up to date in steps of `limit` events (and users); see search-worker.ts. */
export function searchIndexer(db: Database) {
  const state = db.query<{ value: string }, [string]>("SELECT value FROM search_state WHERE key = ?");
  const save = db.query(
    "INSERT INTO search_state (key, value) VALUES (?1, ?2) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
  );
  const upperEvent = db.query<{ id: number | null }, [number, number]>(
    "SELECT max(id) AS id FROM (SELECT id FROM ev.events WHERE id > ?1 ORDER BY id LIMIT ?2)",
  );
  const index = db.query(
    "INSERT INTO events_fts (rowid, event, description) SELECT id, event, coalesce(description, '') FROM ev.events WHERE id > ?1 AND id <= ?2",
  );
  const upperDeleted = db.query<{ seq: number | null }, [number, number]>(
    "SELECT max(seq) AS seq FROM (SELECT seq FROM ev.deleted_events WHERE seq > ?1 ORDER BY seq LIMIT ?2)",
  );
  const unindex = db.query(
    "DELETE FROM events_fts WHERE rowid IN (SELECT event_id FROM ev.deleted_events WHERE seq > ?1 AND seq <= ?2)",
  );
  const users = usersIndexer(db);
  // Deferred: the transaction takes the write lock of search.db only, never the main database's.
  const step = db.transaction((limit: number): number => {
    let done = 0;
    const from = Number(state.get("indexed_through")?.value ?? 0);
    const through = upperEvent.get(from, limit)?.id;
    if (through) {
      done += index.run(from, through).changes;
      users.fromEvents(from, through);
      save.run("indexed_through", String(through));
    }
    const deletedFrom = Number(state.get("deleted_through")?.value ?? 0);
    const deletedThrough = upperDeleted.get(deletedFrom, limit)?.seq;
    if (deletedThrough) {
      unindex.run(deletedFrom, deletedThrough);
      done += deletedThrough - deletedFrom;
      save.run("deleted_through", String(deletedThrough));
    }
    return Math.max(done, users.step(limit));
  });

  return {
    /** Indexes up to `limit` new events, removes up to `limit` deleted ones, follows up to `limit` changed users; returns the most of these (`limit`: there is more). */
    indexPending(limit: number): number {
      return step(limit);
    },
  };
}

/**
 * How far the index has gone ("deleted_through": deleted events it dropped; "users_through": changed
 * profiles it followed): their records up to here can go.
 */
export function indexedThrough(reader: Database, key: "deleted_through" | "users_through"): number {
  const query = reader.query<{ value: string }, [string]>("SELECT value FROM search.search_state WHERE key = ?");
  return Number(query.get(key)?.value ?? 0);
}
