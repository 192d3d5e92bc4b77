// What a plain aggregate (this folder) works with: one implementation in Drizzle for both
// databases, over the connection each store gives it (a write batch's transaction, or a reader's),
// with the few things whose SQL really differs given by the store as hooks.
//
// Queries are typed as PostgreSQL's: both schemas have the same tables, columns and types
// (test/unit/schema-parity.test.ts), and PostgreSQL's builders only run when awaited, which is how
// SQLite's run too. So an aggregate awaits every query, reads one row as `.limit(1)` and the first
// element, counts what changed with `.returning()`, and never calls `.get()`, `.all()` or `.run()`.
import type { PgDb } from "../pg/db.ts";
import type * as schema from "../pg/schema.ts";

export type Tables = typeof schema;

export type Sql = {
  db: PgDb;
  t: Tables;
  dialect: "sqlite" | "postgresql";
  /**
   * `query` holding the rows it reads to the end of the transaction: PostgreSQL's FOR UPDATE, so two
   * instances changing the same row wait for each other; SQLite's writer already holds the database.
   */
  forUpdate<Q>(query: Q): Q;
  /**
   * `query` locking the rows it reads and passing over those another transaction holds:
   * PostgreSQL's FOR UPDATE SKIP LOCKED, so workers of several instances claiming from one queue
   * take different rows without waiting for each other; SQLite's writer already holds the database.
   */
  skipLocked<Q>(query: Q): Q;
  /** This write takes access away (a token revoked, a session ended): readers' caches must forget. */
  accessChanged(): void;
};
