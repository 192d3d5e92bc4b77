// Reading a project's events at one moment (Store.snapshotEvents), for export. Pages read one
// after another, each on its own, see what was committed when each was read: an event written
// behind the read position (a past timestamp) is missed while a later one is seen. So every page
// is read inside one read transaction, on a connection of its own: WAL keeps the transaction's
// snapshot however long it lasts, and the writer (this process's or the server's) goes on
// meanwhile; only the WAL file cannot start over while it lasts, so it grows by what is written.
import { Database } from "bun:sqlite";
import { drizzle } from "drizzle-orm/bun-sqlite";
import type { StoredEvent } from "../../model/event.ts";
import { eventStore } from "./events.ts";
import * as schema from "./schema.ts";

export async function* snapshotEvents(
  path: string,
  where: { projectId: number; channel?: string },
  pageSize: number,
): AsyncGenerator<StoredEvent[]> {
  const connection = new Database(path, { strict: true });
  try {
    connection.exec("PRAGMA busy_timeout = 5000");
    connection.exec("PRAGMA query_only = ON");
    const db = drizzle(connection, { schema });
    const events = eventStore(db, () => db);
    // Deferred: the snapshot is taken by the first page's read, after the export began.
    connection.exec("BEGIN");
    let after = { ts: Number.MIN_SAFE_INTEGER, id: 0 };
    for (;;) {
      const page = events.list({ ...where, after, limit: pageSize });
      if (page.length) yield page;
      if (page.length < pageSize) break;
      const last = page.at(-1)!;
      after = { ts: last.ts, id: last.id };
    }
    connection.exec("COMMIT");
  } finally {
    if (connection.inTransaction) connection.exec("ROLLBACK");
    connection.close();
  }
}
