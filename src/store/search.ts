// The full-text indexer. Events reach events_fts in batches shortly after they are stored, because
// one INSERT … SELECT over many rows costs a fraction of a per-row trigger on the ingest path.
// Search therefore sees an event a moment (well under a second when idle) after it was acknowledged.
// Batches are small and frequent: one large batch stalls the requests queued behind it.
import type { Database } from "bun:sqlite";

const CURSOR = "search.indexed_through";

export function searchIndexer(sqlite: Database) {
  const cursor = sqlite.query<{ value: string }, [string]>("SELECT value FROM meta WHERE key = ?");
  const saveCursor = sqlite.query("INSERT INTO meta (key, value) VALUES (?1, ?2) ON CONFLICT(key) DO UPDATE SET value = excluded.value");
  const upper = sqlite.query<{ id: number | null }, [number, number]>("SELECT max(id) AS id FROM (SELECT id FROM events WHERE id > ?1 ORDER BY id LIMIT ?2)");
  const index = sqlite.query("INSERT INTO events_fts (rowid, event, description) SELECT id, event, coalesce(description, '') FROM events WHERE id > ?1 AND id <= ?2");

  return {
    /** Indexes up to `limit` events not yet indexed; returns how many. Run inside a transaction. */
    indexPending(limit: number): number {
      const from = Number(cursor.get(CURSOR)?.value ?? 0);
      const through = upper.get(from, limit)?.id;
      if (!through) return 0;
      const { changes } = index.run(from, through);
      saveCursor.run(CURSOR, String(through));
      return changes;
    },
  };
}

export type SearchIndexer = ReturnType<typeof searchIndexer>;
