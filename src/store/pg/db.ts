// Connecting to PostgreSQL through Bun's own client (nothing native: it works in the compiled
// binary) and Drizzle's bun-sql driver. The driver seam is this file: another client (postgres.js)
// would change only what is opened here. What a failure means is decided here too.
import { SQL } from "bun";
import type { PgDatabase, PgQueryResultHKT } from "drizzle-orm/pg-core";
import { drizzle } from "drizzle-orm/bun-sql";
import type { SQL as Query } from "drizzle-orm";
import { AppError, BadRequest, Conflict, StorageUnavailable } from "../../errors.ts";
import * as schema from "./schema.ts";

export type PgDb = PgDatabase<PgQueryResultHKT, typeof schema>;

export type PgOptions = {
  /** Connections in the pool. */
  max?: number;
  /** The server ends any statement of this pool that runs longer (ms): a read's last line of defence. */
  statementTimeoutMs?: number;
  /**
   * Never compile a statement (PostgreSQL's JIT). Past a plan cost of 100,000, which a chart over a
   * few hundred thousand events has, the server compiles its expressions first: 100-330 ms of a
   * 3-step funnel over 30 days at a million events (a third of its time), and 115 ms of a 139 ms
   * users search. The reads here run in well under the time that could pay back.
   */
  noJit?: boolean;
  /**
   * Plan every statement with its values (plan_cache_mode = force_custom_plan). From its sixth run a
   * prepared statement may get a generic plan, blind to its values: a funnel's round then tested
   * each event's user against a list of 30,000 settled users one by one instead of by a hash (a
   * funnel at a million events went from 2.5 s to more than a minute). Planning a read costs
   * milliseconds; the reads here run for tens or hundreds of them.
   */
  customPlans?: boolean;
  /** Called with each query the pool's Drizzle sends, as it is sent: a read's queries, to cancel them. */
  onQuery?: (query: { cancel(): unknown }) => void;
};

export function openPg(
  url: string,
  { max = 10, statementTimeoutMs, noJit, customPlans, onQuery }: PgOptions = {},
): { sql: SQL; db: PgDb } {
  const connection = {
    ...(statementTimeoutMs ? { statement_timeout: Math.ceil(statementTimeoutMs) } : {}),
    ...(noJit ? { jit: "off" } : {}),
    ...(customPlans ? { plan_cache_mode: "force_custom_plan" } : {}),
  };
  const sql = new SQL(url, {
    max,
    idleTimeout: 60,
    connectionTimeout: 10,
    connection: Object.keys(connection).length ? connection : undefined,
  });
  return { sql, db: drizzle({ client: onQuery ? watched(sql, onQuery) : sql, schema }) as unknown as PgDb };
}

/** `sql` as Drizzle uses it (unsafe(text, params) for every query), each query shown to `onQuery` as it is made. */
function watched(sql: SQL, onQuery: (query: { cancel(): unknown }) => void): SQL {
  return new Proxy(sql, {
    get(target, prop) {
      if (prop === "unsafe") {
        return (text: string, params?: unknown[]) => {
          const query = target.unsafe(text, params);
          onQuery(query);
          return query;
        };
      }
      const value = Reflect.get(target, prop, target);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}

/** The server's own error under a Drizzle wrapper, if any. */
function cause(error: unknown): { code?: unknown; errno?: unknown; message?: unknown } {
  const e = error as { cause?: unknown; code?: unknown };
  return (e?.cause && typeof e.cause === "object" ? e.cause : e) as { code?: unknown; errno?: unknown };
}

/** SQLSTATE classes that are the database's trouble, not the request's: connection, resources, shutdown, system. */
const STORAGE_STATES = /^(08|53|54|57|58|XX|40P01|40001|55P03)/;

/** A failure of the database or the connection to it (every write of a batch fails with it), not of one write. */
export function isStorageFailure(error: unknown): boolean {
  if (error instanceof AppError) return false;
  const { code, errno } = cause(error);
  if (typeof code === "string" && code.startsWith("ERR_POSTGRES_") && code !== "ERR_POSTGRES_SERVER_ERROR") return true;
  return typeof errno === "string" && STORAGE_STATES.test(errno);
}

export function toStorageError(error: unknown): AppError {
  if (error instanceof AppError) return error;
  const { errno } = cause(error);
  if (errno === "53100") return new StorageUnavailable("the database's disk is full");
  if (typeof errno === "string" && /^(57P|08)/.test(errno))
    return new StorageUnavailable("the database is not reachable");
  return new StorageUnavailable("the database could not commit");
}

/** What a failed read becomes: the database being unreachable is the service's trouble (503, retry later), not a bug (500). */
export const readFailure = (error: unknown): unknown =>
  isStorageFailure(error) ? toStorageError(error) : nulRefused(error);

/** A read whose failure becomes what it means (readFailure). */
export const asRead =
  (fn: (...args: unknown[]) => Promise<unknown>) =>
  (...args: unknown[]): Promise<unknown> =>
    fn(...args).catch((error) => Promise.reject(readFailure(error)));

/** Text with the NUL character that reached a query anyway: the request's fault (400), never a 500. */
export function nulRefused(error: unknown): unknown {
  if (cause(error).errno === "22021")
    return new BadRequest("Text holding the NUL character (U+0000) cannot be stored or searched.", "invalid_string");
  return error;
}

/** A write that refers to a row deleted on its way (a project, a channel, a member): a conflict, as in SQLite. */
export function raced(error: unknown): unknown {
  if (cause(error).errno === "23503")
    return new Conflict(
      "Something this refers to was deleted a moment ago (a project, a channel or a member). Reload and try again.",
    );
  return error;
}

/** How a raw query's rows are read on `db`: as a plain array. */
export const rowsOn =
  (db: PgDb) =>
  async <T>(query: Query): Promise<T[]> => [...((await db.execute(query)) as unknown as T[])];

/** A plain-text description of a connection problem, for the start-up error; `named`: where the URL was given. */
export function connectionProblem(error: unknown, url: string, named = "DATABASE_URL / --database-url"): string {
  const safe = url.replace(/^(\w+:\/\/[^:/@]+):[^@]*@/, "$1:***@");
  const { code, message } = cause(error);
  return `cannot use the PostgreSQL database at ${safe} (${named}): ${String(message ?? code ?? error)}`;
}
