// What a plain aggregate (this folder) works with: one implementation in Drizzle for both
// databases, over the connection each store gives it (a write batch's transaction, or a reader's),
// with the few things whose SQL really differs given by the store as hooks.
//
// Queries are typed as PostgreSQL's: both schemas have the same tables, columns and types
// (test/unit/schema-parity.test.ts), and PostgreSQL's builders only run when awaited, which is how
// SQLite's run too. So an aggregate awaits every query, reads one row as `.limit(1)` and the first
// element, counts what changed with `.returning()`, and never calls `.get()`, `.all()` or `.run()`.
import type { SQL, SQLWrapper } from "drizzle-orm";
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
  /**
   * In a write, holds `key` to the end of the transaction: another instance's write taking the same
   * key waits (PostgreSQL's advisory transaction lock), so a check-then-create on a name cannot race.
   * SQLite's writer already holds the database; a read takes nothing.
   */
  lockName(key: string): Promise<void>;
  /** This write takes access away (a token revoked, a session ended): readers' caches must forget. */
  accessChanged(): void;
  /**
   * This write changes what a store may remember of projects and channels by name (a retention, a
   * channel deleted): PostgreSQL's name cache (pg/names.ts), per instance, is forgotten by every one.
   * SQLite remembers none.
   */
  namesChanged(): void;
  /**
   * Before a project's row goes: what goes with it that no foreign key takes, its events' tags (each
   * store's tuned tag index), and on SQLite's writer the summaries it remembers of the project.
   */
  projectGone(projectId: number): Promise<void>;
  /**
   * JSON text `old` (a column, or null for none) with the JSON text `patch` merged in, a null in it
   * removing the key, with each store's JSON functions: SQLite's json_patch, PostgreSQL's jsonb.
   */
  mergeJson(old: SQLWrapper | null, patch: string): SQL;
  /**
   * `column` is one of `ids`, however many: SQLite's json_each over one parameter (a statement
   * holds at most 32,766), PostgreSQL's IN list.
   */
  idIn(column: SQLWrapper, ids: number[]): SQL;
};

/**
 * Text holding the NUL character: no name or id holds one (every one with it is refused), and
 * PostgreSQL cannot even compare with it, so a lookup by it finds nothing, on either store.
 */
export const hasNul = (text: string): boolean => text.includes("\u0000");
