// What `signalboard copy` carries, worked out from the schemas (src/store/copy/plan.ts): every table
// of either dialect is copied or declared not copied (with why), parents before children, and what
// a database holds beyond the plan is named before anything is written. The PostgreSQL side of
// the last check runs in test/pg/copy.test.ts.
import { Database } from "bun:sqlite";
import { describe, expect, test } from "bun:test";
import { integer as pgInteger, pgTable, text as pgText } from "drizzle-orm/pg-core";
import { integer, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { copyPlan, coverage, type Dialect, NOT_COPIED, OWN_META_KEYS, SCHEMAS } from "../../src/store/copy/plan.ts";
import { sqliteOwn } from "../../src/store/copy/sqlite.ts";
import { projects as pgProjects } from "../../src/store/pg/schema.ts";
import { migrate } from "../../src/store/sqlite/migrate.ts";
import { projects } from "../../src/store/sqlite/schema.ts";

const DIRECTIONS: [Dialect, Dialect][] = [
  ["sqlite", "postgresql"],
  ["postgresql", "sqlite"],
  ["sqlite", "sqlite"],
  ["postgresql", "postgresql"],
];

/** The tables of a freshly migrated SQLite database, with their columns, as it lists them. */
function migratedSqlite(): Map<string, Set<string>> {
  const db = new Database(":memory:");
  migrate(db);
  const names = db.query<{ name: string }, []>("SELECT name FROM sqlite_master WHERE type = 'table'").all();
  return new Map(
    names.map(({ name }) => [
      name,
      new Set(
        db
          .query<{ name: string }, [string]>("SELECT name FROM pragma_table_info(?)")
          .all(name)
          .map((c) => c.name),
      ),
    ]),
  );
}

describe("what a copy carries", () => {
  test("every table of both schemas is copied, or declared not copied with why, in every direction", () => {
    const all = new Set([...Object.keys(SCHEMAS.sqlite), ...Object.keys(SCHEMAS.postgresql)]);
    for (const [from, to] of DIRECTIONS) {
      const { tables, problems } = copyPlan(from, to);
      expect(problems).toEqual([]);
      const copied = tables.map((t) => t.name);
      expect(new Set(copied).size).toBe(copied.length);
      expect(copied.sort()).toEqual([...all].filter((n) => !(n in NOT_COPIED)).sort());
    }
    // What the instance is made of is among them (the list of what a move used to lose included).
    const copied = copyPlan("sqlite", "postgresql").tables.map((t) => t.name);
    for (const name of ["users", "api_tokens", "events", "event_tags", "metric_history", "charts", "dashboards"])
      expect(copied).toContain(name);
    for (const name of ["alerts", "integrations", "digests", "push_subscriptions", "meta", "audit_log", "sessions"])
      expect(copied).toContain(name);
    for (const why of [...Object.values(NOT_COPIED), ...Object.values(OWN_META_KEYS)])
      expect(why.length).toBeGreaterThan(20);
  });

  test("tables come after the tables they refer to", () => {
    const order = copyPlan("sqlite", "postgresql").tables.map((t) => t.name);
    const before = (a: string, b: string) => expect(order.indexOf(a)).toBeLessThan(order.indexOf(b));
    before("projects", "channels");
    before("channels", "events");
    before("users", "push_subscriptions");
    before("api_tokens", "token_projects");
    before("metrics", "metric_history");
    before("deliveries", "delivery_attempts");
  });

  test("a new table in both schemas is copied, after its parents, with no change to the copy", () => {
    const sqlite = sqliteTable("checks", {
      id: integer("id").primaryKey({ autoIncrement: true }),
      projectId: integer("project_id").references(() => projects.id),
      name: text("name").notNull(),
    });
    const pg = pgTable("checks", {
      id: pgInteger("id").primaryKey().generatedByDefaultAsIdentity(),
      projectId: pgInteger("project_id").references(() => pgProjects.id),
      name: pgText("name").notNull(),
    });
    const schemas = {
      sqlite: { ...SCHEMAS.sqlite, checks: sqlite },
      postgresql: { ...SCHEMAS.postgresql, checks: pg },
    };
    const { tables, problems } = copyPlan("sqlite", "postgresql", schemas);
    expect(problems).toEqual([]);
    const order = tables.map((t) => t.name);
    expect(order).toContain("checks");
    expect(order.indexOf("projects")).toBeLessThan(order.indexOf("checks"));
    expect(tables.find((t) => t.name === "checks")!.write.map((c) => c.name)).toEqual(["id", "project_id", "name"]);
  });

  test("a table in one schema only, or a column the other lacks, stops the copy and is named", () => {
    const only = sqliteTable("gadgets", { id: integer("id").primaryKey() });
    const oneSided = copyPlan("sqlite", "postgresql", { ...SCHEMAS, sqlite: { ...SCHEMAS.sqlite, gadgets: only } });
    expect(oneSided.problems).toEqual([expect.stringContaining("table gadgets is in the sqlite schema only")]);

    const wider = sqliteTable("meta", {
      key: text("key").primaryKey(),
      value: text("value").notNull(),
      note: text("note"),
    });
    const widened = { ...SCHEMAS, sqlite: { ...SCHEMAS.sqlite, meta: wider } };
    expect(copyPlan("sqlite", "postgresql", widened).problems).toEqual([
      expect.stringContaining("column meta.note is in the sqlite schema only and would be lost"),
    ]);
    expect(copyPlan("postgresql", "sqlite", widened).problems).toEqual([
      expect.stringContaining("column meta.note is in the sqlite schema only and nothing fills it"),
    ]);
  });

  test("PostgreSQL's own column of events is filled as its writer fills it; its generated one is left to it", () => {
    const events = copyPlan("sqlite", "postgresql").tables.find((t) => t.name === "events")!;
    const made = events.write.find((c) => c.name === "search_text")!;
    expect(typeof made.from).toBe("function");
    const row: Record<string, unknown> = { event: "Payment Received", description: "Café crème, 2 cups" };
    expect((made.from as (v: (c: string) => unknown) => unknown)((c) => row[c])).toBe(
      "payment received cafe creme 2 cups",
    );
    expect(events.write.map((c) => c.name)).not.toContain("search");
    // Back to SQLite, the words are read but not written: SQLite's index is built from the name and description.
    const back = copyPlan("postgresql", "sqlite").tables.find((t) => t.name === "events")!;
    expect(back.write.map((c) => c.name)).not.toContain("search_text");
  });

  test("meta's keys that belong to each database stay out of the copy and of the counts", () => {
    const meta = copyPlan("sqlite", "postgresql").tables.find((t) => t.name === "meta")!;
    expect(meta.skip).toEqual({ column: "key", values: Object.keys(OWN_META_KEYS) });
    expect(meta.skip!.values).toContain("schema.migrated_by");
    expect(meta.skip!.values).not.toContain("vapid.private_key");
    expect(meta.isData).toBe(false);
  });

  test("a migrated SQLite database holds nothing the plan leaves behind, and a table or column added by hand is named", () => {
    const { tables } = copyPlan("sqlite", "postgresql");
    const actual = migratedSqlite();
    expect(coverage("source", actual, tables, sqliteOwn)).toEqual([]);
    // deleted_events is made by a migration only (no schema declares it): it is declared not copied.
    expect(actual.has("deleted_events")).toBe(true);

    actual.set("gadgets", new Set(["id"]));
    actual.get("projects")!.add("colour");
    expect(coverage("source", actual, tables, sqliteOwn)).toEqual([
      "the source's table projects has a column colour that this version does not know how to copy",
      "the source has a table gadgets that this version does not know how to copy",
    ]);
  });

  test("every declaration names a table that exists somewhere", () => {
    const sqlite = migratedSqlite();
    for (const name of Object.keys(NOT_COPIED))
      expect(name in SCHEMAS.sqlite || name in SCHEMAS.postgresql || sqlite.has(name)).toBe(true);
  });
});
