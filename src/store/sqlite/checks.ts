// What a ping asks of its check (the rest is store/aggregates/checks.ts): the check its URL names
// and the change of its state, as plain prepared statements. A ping is as small a write as an
// event, and the query builder costs several times the statement itself.
import { getTableColumns } from "drizzle-orm";
import type { CheckRepository } from "../store.ts";
import { hasNul } from "../aggregates/sql.ts";
import { checkRow, type CheckRow, checkUpdate } from "../aggregates/checks.ts";
import type { Db } from "./db.ts";
import { checks } from "./schema.ts";

export type CheckLookups = Pick<CheckRepository, "findBy" | "update">;

const COLUMNS = Object.entries(getTableColumns(checks));
/** Every column, named as the aggregate's rows name it. */
const SELECTED = COLUMNS.map(([field, column]) => `${column.name} AS "${field}"`).join(", ");
const NAMES = new Map(COLUMNS.map(([field, column]) => [field, column]));

/** A row as SQLite gives it, in the values the query builder would have made of it. */
function fromDriver(raw: Record<string, unknown>): CheckRow {
  const row: Record<string, unknown> = {};
  for (const [field, column] of COLUMNS)
    row[field] = raw[field] === null ? null : column.mapFromDriverValue(raw[field] as never);
  return row as CheckRow;
}

export function checkLookups(db: Db): CheckLookups {
  type Raw = Record<string, unknown>;
  const client = db.$client;
  // Prepared at first use: a connection may be opened on a database not yet migrated.
  // Two rows at most: one is the check, two say the slug is not unique.
  const select = (where: string) => `SELECT ${SELECTED} FROM checks WHERE ${where} ORDER BY id LIMIT 2`;
  let byKey: {
    uuid: ReturnType<typeof client.prepare<Raw, [string]>>;
    pushToken: ReturnType<typeof client.prepare<Raw, [string]>>;
    slug: ReturnType<typeof client.prepare<Raw, [number, string]>>;
  } | null = null;
  /** An UPDATE of each set of columns a change names (a handful: what pings and the round change). */
  const updates = new Map<string, ReturnType<typeof client.prepare<Raw, (string | number | null)[]>>>();

  return {
    async findBy(key) {
      if (Object.values(key).some((v) => typeof v === "string" && hasNul(v))) return [];
      // The writer holds the database: there is nothing to lock.
      byKey ??= {
        uuid: client.prepare(select("uuid = ?")),
        pushToken: client.prepare(select("push_token = ?")),
        slug: client.prepare(select("project_id = ? AND slug = ?")),
      };
      const rows =
        "uuid" in key
          ? byKey.uuid.all(key.uuid)
          : "pushToken" in key
            ? byKey.pushToken.all(key.pushToken)
            : byKey.slug.all(key.projectId, key.slug);
      return rows.map((raw) => checkRow(fromDriver(raw)));
    },

    async update(id, changes, now) {
      const set = { ...checkUpdate(changes), updatedAt: now } as Record<string, unknown>;
      const fields = Object.keys(set).sort();
      const shape = fields.join(",");
      let statement = updates.get(shape);
      if (!statement) {
        const assignments = fields.map((f) => `${NAMES.get(f)!.name} = ?`).join(", ");
        statement = client.prepare(`UPDATE checks SET ${assignments} WHERE id = ? RETURNING ${SELECTED}`);
        updates.set(shape, statement);
      }
      const values = fields.map((f) =>
        set[f] === null ? null : (NAMES.get(f)!.mapToDriverValue(set[f] as never) as string | number),
      );
      const raw = statement.get(...values, id);
      return raw ? checkRow(fromDriver(raw)) : null;
    },
  };
}
