// The PostgreSQL end of a copy. As a source: one REPEATABLE READ, READ ONLY transaction on a
// connection reserved for it (one moment, no locks that the instances' writes wait for). As a
// target: the whole copy is one transaction, so until it commits the instances on that database
// see the database as it was, and a copy that fails or does not match leaves it so.
import type { ReservedSQL, SQL } from "bun";
import { randomBytes } from "node:crypto";
import { BadRequest } from "../../errors.ts";
import { connectionProblem, openPg } from "../pg/db.ts";
import { migrate } from "../pg/migrate.ts";
import { fillUserSearch } from "../pg/users-search.ts";
import type { CopyTable } from "./plan.ts";
import { type Catalog, type CopySource, type CopyTarget, HELD_COUNTED, pageConditions, quote } from "./sides.ts";

/** Tables at a PostgreSQL target that the copy empties and fills again from the copied rows (plan.ts NOT_COPIED). */
const REBUILT = ["user_search"];

type Connected = { sql: SQL; connection: ReservedSQL };

/** `named`: where the URL was given, for the message when it cannot be used. */
async function connect(url: string, begin: string, named?: string): Promise<Connected> {
  const { sql } = openPg(url, { max: 2 });
  try {
    await migrate(sql); // as every command does: the tables are this version's
    const connection = await sql.reserve();
    await connection.unsafe(begin);
    return { sql, connection };
  } catch (error) {
    await sql.close().catch(() => {});
    if (error instanceof Error && error.name === "MigrationError") throw error;
    throw new Error(connectionProblem(error, url, named));
  }
}

export async function pgSource(url: string): Promise<CopySource> {
  const { sql, connection } = await connect(url, "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY");
  // Held until the copy ends, so a target that cannot take it is this database; the first query
  // also takes the snapshot: now.
  const mark = { key: BigInt.asIntN(64, BigInt(`0x${randomBytes(8).toString("hex")}`)).toString() };
  await connection.unsafe("SELECT pg_advisory_xact_lock($1::bigint)", [mark.key]);
  return {
    dialect: "postgresql",
    mark,
    catalog: () => catalog(connection),
    pages: (table, size) => pages(connection, table, size),
    count: (table) => count(connection, table),
    async counters() {
      const counters = new Map<string, number>();
      const [{ last_id }] = (await connection.unsafe("SELECT last_id FROM event_ids")) as [{ last_id: string }];
      counters.set("events", Number(last_id));
      for (const { table, value } of (await connection.unsafe(
        `SELECT table_name AS table, pg_sequence_last_value(pg_get_serial_sequence(quote_ident(table_name), column_name)::regclass) AS value
           FROM information_schema.columns WHERE table_schema = current_schema() AND is_identity = 'YES'`,
      )) as { table: string; value: string | null }[])
        if (value !== null) counters.set(table, Number(value));
      return counters;
    },
    async close() {
      await connection.unsafe("ROLLBACK").catch(() => {});
      connection.release();
      await sql.close({ timeout: 5 });
    },
  };
}

/** `mark`: the source's, when it is on PostgreSQL too: a target that cannot take it is the source itself. */
export async function pgTarget(url: string, mark: CopySource["mark"]): Promise<CopyTarget> {
  const { sql, connection } = await connect(url, "BEGIN", "--to");
  /** Indexes set aside while rows go in (those behind no constraint), made again once they are in. */
  let indexes: { table: string; name: string; definition: string }[] = [];
  const remake = async (which: (table: string) => boolean) => {
    for (const index of indexes.filter((i) => which(i.table))) await connection.unsafe(index.definition);
    indexes = indexes.filter((i) => !which(i.table));
  };
  let open = true;
  const end = async (statement: "COMMIT" | "ROLLBACK") => {
    if (!open) return;
    open = false;
    try {
      await connection.unsafe(statement);
    } finally {
      connection.release();
    }
  };
  try {
    if (mark) {
      const [{ free }] = (await connection.unsafe("SELECT pg_try_advisory_xact_lock($1::bigint) AS free", [
        mark.key,
      ])) as [{ free: boolean }];
      if (!free)
        throw new BadRequest("the target is the source's own database: a copy there would destroy what it copies");
    }
  } catch (error) {
    await end("ROLLBACK");
    await sql.close();
    throw error;
  }
  return {
    dialect: "postgresql",
    catalog: () => catalog(connection),
    async holding(tables) {
      const held: { table: string; rows: number }[] = [];
      for (const table of tables.filter((t) => t.isData)) {
        const rows = await count(connection, table, HELD_COUNTED);
        if (rows > 0) held.push({ table: table.name, rows });
      }
      return held;
    },
    async clear(tables) {
      const whole = [...tables.filter((t) => !t.skip).map((t) => t.name), ...REBUILT];
      await connection.unsafe(`TRUNCATE ${whole.map(quote).join(", ")} CASCADE`);
      for (const table of tables.filter((t) => t.skip)) {
        const { text, skipped } = pageConditions(table, false, (i) => `$${i + 1}`);
        await connection.unsafe(`DELETE FROM ${quote(table.name)}${text}`, skipped);
      }
      // An index built once over all the rows takes a fraction of the time of one kept up row by
      // row (the events' search index most of all), as pg_restore does. The transaction undoes
      // this too when the copy does not go through.
      indexes = (await connection.unsafe(
        `SELECT i.tablename AS table, i.indexname AS name, i.indexdef AS definition FROM pg_indexes i
            WHERE i.schemaname = current_schema() AND i.tablename = ANY($1::text[])
              AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conindid = format('%I.%I', i.schemaname, i.indexname)::regclass)`,
        [[...tables.map((t) => t.name), ...REBUILT]],
      )) as { table: string; name: string; definition: string }[];
      for (const index of indexes) await connection.unsafe(`DROP INDEX ${quote(index.name)}`);
      // The summaries are copied as they are (of the same snapshot as the events): the trigger
      // that adds inserted events to them would count the copied events twice.
      await connection.unsafe("ALTER TABLE events DISABLE TRIGGER events_summaries");
    },
    async write(table, rows) {
      const columns = table.write.map((c) => quote(c.name)).join(", ");
      const arrays = table.write.map((c, i) => `$${i + 1}::${c.target.getSQLType()}[]`).join(", ");
      const params = table.write.map((_, i) => rows.map((row) => row[i]));
      await connection.unsafe(`INSERT INTO ${quote(table.name)} (${columns}) SELECT * FROM unnest(${arrays})`, params);
    },
    async finish(tables, counters) {
      for (const table of tables) {
        const identity = table.write.find((c) => c.target.generatedIdentity);
        if (!identity) continue;
        const [{ next }] = (await connection.unsafe(
          `SELECT greatest($1::bigint, (SELECT coalesce(max(${quote(identity.name)}), 0) FROM ${quote(table.name)})) AS next`,
          [counters.get(table.name) ?? 0],
        )) as [{ next: string }];
        if (Number(next) > 0)
          await connection.unsafe("SELECT setval(pg_get_serial_sequence($1, $2), $3::bigint)", [
            quote(table.name),
            identity.name,
            next,
          ]);
      }
      // Event ids come from this counter, not a sequence (pg/schema.ts).
      await connection.unsafe(
        "UPDATE event_ids SET last_id = greatest($1::bigint, (SELECT coalesce(max(id), 0) FROM events))",
        [counters.get("events") ?? 0],
      );
      await connection.unsafe("ALTER TABLE events ENABLE TRIGGER events_summaries");
      await remake((table) => !REBUILT.includes(table)); // the users search is filled from the events' user index
      await fillUserSearch(connection);
      await remake(() => true);
    },
    count: (table) => count(connection, table),
    async commit() {
      await end("COMMIT");
      // Fresh statistics for the planner, rather than waiting for autovacuum to notice the new rows.
      await sql.unsafe("ANALYZE").catch(() => {});
      await sql.close({ timeout: 5 });
    },
    async abandon() {
      await end("ROLLBACK").catch(() => {});
      await sql.close({ timeout: 5 }).catch(() => {});
    },
  };
}

async function catalog(connection: ReservedSQL): Promise<Catalog> {
  const rows = (await connection.unsafe(
    `SELECT c.table_name AS table, c.column_name AS column FROM information_schema.columns c
       JOIN information_schema.tables t ON t.table_schema = c.table_schema AND t.table_name = c.table_name
      WHERE c.table_schema = current_schema() AND t.table_type = 'BASE TABLE'`,
  )) as { table: string; column: string }[];
  const out: Catalog = new Map();
  for (const { table, column } of rows) {
    if (!out.has(table)) out.set(table, new Set());
    out.get(table)!.add(column);
  }
  return out;
}

/** The table's rows (those not skipped); with `limit`, counted up to it. */
async function count(connection: ReservedSQL, table: CopyTable, limit?: number): Promise<number> {
  const { text, skipped } = pageConditions(table, false, (i) => `$${i + 1}`);
  const from = `FROM ${quote(table.name)}${text}`;
  const query =
    limit === undefined
      ? `SELECT count(*) AS n ${from}`
      : `SELECT count(*) AS n FROM (SELECT 1 ${from} LIMIT ${limit}) r`;
  const [{ n }] = (await connection.unsafe(query, skipped)) as [{ n: string }];
  return Number(n);
}

async function* pages(connection: ReservedSQL, table: CopyTable, size: number): AsyncGenerator<unknown[][]> {
  const columns = table.read.map((c) => quote(c.name)).join(", ");
  const order = table.key.map(quote).join(", ");
  const typeOf = (name: string) => table.read.find((c) => c.name === name)!.getSQLType();
  const query = (after: boolean) => {
    const { text } = pageConditions(table, after, (i, column) => `$${i + 1}::${typeOf(column)}`);
    return `SELECT ${columns} FROM ${quote(table.name)}${text} ORDER BY ${order} LIMIT ${size}`;
  };
  const first = query(false);
  const next = query(true);
  const keyAt = table.key.map((k) => table.read.findIndex((c) => c.name === k));
  const skipped = table.skip?.values ?? [];
  let last: unknown[] | null = null;
  for (;;) {
    const rows = (await (last
      ? connection.unsafe(next, [...skipped, ...keyAt.map((i) => last![i])])
      : connection.unsafe(first, skipped)
    ).values()) as unknown[][];
    if (rows.length) yield rows;
    if (rows.length < size) return;
    last = rows.at(-1)!;
  }
}
