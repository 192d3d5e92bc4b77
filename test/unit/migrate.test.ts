import { Database } from "bun:sqlite";
import { describe, expect, test } from "bun:test";
import journal from "../../drizzle/meta/_journal.json";
import { MIGRATIONS, migrate } from "../../src/store/migrate.ts";

describe("migrations", () => {
  test("every migration in drizzle/ is embedded, and nothing else", () => {
    expect(Object.keys(MIGRATIONS)).toEqual(journal.entries.map((e) => e.tag));
  });

  test("apply once, then are a no-op", () => {
    const db = new Database(":memory:");
    expect(migrate(db)).toEqual(journal.entries.map((e) => e.tag));
    expect(migrate(db)).toEqual([]);
  });

  test("refuse a database migrated by a newer version", () => {
    const db = new Database(":memory:");
    migrate(db);
    db.query("INSERT INTO __migrations (tag, applied_at) VALUES ('9999_future', 0)").run();
    expect(() => migrate(db)).toThrow(/newer Signalboard/);
  });
});
