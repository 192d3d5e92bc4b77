import { Database } from "bun:sqlite";
import { describe, expect, test } from "bun:test";
import pgJournal from "../../drizzle/pg/meta/_journal.json";
import journal from "../../drizzle/sqlite/meta/_journal.json";
import { MIGRATIONS as PG_MIGRATIONS } from "../../src/store/pg/migrate.ts";
import { MIGRATIONS, migrate } from "../../src/store/sqlite/migrate.ts";

describe("migrations", () => {
  test("every migration in drizzle/ is embedded, and nothing else", () => {
    expect(Object.keys(MIGRATIONS)).toEqual(journal.entries.map((e) => e.tag));
    expect(Object.keys(PG_MIGRATIONS)).toEqual(pgJournal.entries.map((e) => e.tag));
  });

  test("apply once, then are a no-op", () => {
    const db = new Database(":memory:");
    expect(migrate(db)).toEqual(journal.entries.map((e) => e.tag));
    expect(migrate(db)).toEqual([]);
  });

  test("public tokens made before they needed permission to notify keep notifying", () => {
    const db = new Database(":memory:");
    const before = journal.entries.findIndex((e) => e.tag === "0006_tokens_creator_and_notify");
    // The database as the previous version left it: every migration up to 0006, and a public token.
    db.exec("CREATE TABLE __migrations (tag TEXT PRIMARY KEY, applied_at INTEGER NOT NULL)");
    for (const { tag } of journal.entries.slice(0, before)) {
      for (const statement of MIGRATIONS[tag]!.split("--> statement-breakpoint")) if (statement.trim()) db.exec(statement);
      db.query("INSERT INTO __migrations (tag, applied_at) VALUES (?, 0)").run(tag);
    }
    db.exec("INSERT INTO projects (name, created_at) VALUES ('site', 0)");
    db.exec("INSERT INTO api_tokens (name, kind, project_id, prefix, hash, created_at) VALUES ('old web page', 'public', 1, 'sb_old', 'h', 0), ('old backend', 'full', NULL, 'sb_full', 'h2', 0)");
    migrate(db);
    expect(db.query("SELECT name, may_notify AS mayNotify FROM api_tokens ORDER BY id").all()).toEqual([
      { name: "old web page", mayNotify: 1 },
      { name: "old backend", mayNotify: 0 },
    ]);
  });

  test("accounts made before roles, all members who could do everything but the owner's part, become admins", () => {
    const db = new Database(":memory:");
    const before = journal.entries.findIndex((e) => e.tag === "0012_teams");
    db.exec("CREATE TABLE __migrations (tag TEXT PRIMARY KEY, applied_at INTEGER NOT NULL)");
    for (const { tag } of journal.entries.slice(0, before)) {
      for (const statement of MIGRATIONS[tag]!.split("--> statement-breakpoint")) if (statement.trim()) db.exec(statement);
      db.query("INSERT INTO __migrations (tag, applied_at) VALUES (?, 0)").run(tag);
    }
    db.exec("INSERT INTO users (username, password_hash, role, created_at, updated_at) VALUES ('boss', 'h', 'owner', 0, 0), ('ann', 'h', 'member', 0, 0)");
    db.exec("INSERT INTO api_tokens (name, kind, prefix, hash, created_at) VALUES ('laptop', 'full', 'sb_a', 'h', 0), ('laptop', 'full', 'sb_b', 'h', 0)");
    migrate(db);
    expect(db.query("SELECT username, role, limited FROM users ORDER BY id").all()).toEqual([
      { username: "boss", role: "owner", limited: 0 },
      { username: "ann", role: "admin", limited: 0 },
    ]);
    // Tokens that shared a name keep it (new ones may not), and reach every project as before.
    expect(db.query("SELECT name, limited FROM api_tokens ORDER BY id").all()).toEqual([
      { name: "laptop", limited: 0 },
      { name: "laptop", limited: 0 },
    ]);
  });

  test("refuse a database migrated by a newer version", () => {
    const db = new Database(":memory:");
    migrate(db);
    db.query("INSERT INTO __migrations (tag, applied_at) VALUES ('9999_future', 0)").run();
    expect(() => migrate(db)).toThrow(/newer Signalboard/);
  });
});
