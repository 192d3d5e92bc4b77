// Reading a project's events at one moment (Store.snapshotEvents), for export. Pages read one
// after another on the pool each see what was committed when each was read: an event written
// behind the read position (a past timestamp) is missed while a later one is seen. So every page
// is read in one REPEATABLE READ, READ ONLY transaction on a connection reserved for it: one
// snapshot, taken by the first page's query, and no locks that writers wait for. While it lasts,
// VACUUM keeps the rows it could still see, as it does for pg_dump.
import type { SQL } from "bun";
import { drizzle } from "drizzle-orm/bun-sql";
import type { StoredEvent } from "../../model/event.ts";
import { type PgDb, readFailure } from "./db.ts";
import { eventStore } from "./events.ts";
import type { NameCache } from "./names.ts";
import * as schema from "./schema.ts";

export async function* snapshotEvents(
  sql: SQL,
  names: NameCache,
  where: { projectId: number; channel?: string },
  pageSize: number,
): AsyncGenerator<StoredEvent[]> {
  const connection = await sql.reserve().catch((error) => Promise.reject(readFailure(error)));
  let open = false;
  try {
    await connection.unsafe("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY");
    open = true;
    const events = eventStore({ db: drizzle({ client: connection, schema }) as unknown as PgDb, batch: null, names });
    let after = { ts: Number.MIN_SAFE_INTEGER, id: 0 };
    for (;;) {
      const page = await events.list({ ...where, after, limit: pageSize });
      if (page.length) yield page;
      if (page.length < pageSize) break;
      const last = page.at(-1)!;
      after = { ts: last.ts, id: last.id };
    }
    open = false;
    await connection.unsafe("COMMIT");
  } catch (error) {
    throw readFailure(error);
  } finally {
    // A loop left early (a reader that went away) or a failure: the transaction only read.
    if (open) await connection.unsafe("ROLLBACK").catch(() => {});
    connection.release();
  }
}
