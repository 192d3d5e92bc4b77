import { Database } from "bun:sqlite";
import { describe, expect, test } from "bun:test";
import pgJournal from "../../drizzle/pg/meta/_journal.json";
import journal from "../../drizzle/sqlite/meta/_journal.json";
import { MIGRATIONS as PG_MIGRATIONS } from "../../src/store/pg/migrate.ts";
import pkg from "../../package.json";
import { compareVersions, MigrationError, OLDEST_COMPATIBLE, SCHEMA_META } from "../../src/store/schema-version.ts";
import { MIGRATIONS, migrate } from "../../src/store/sqlite/migrate.ts";
import { setLogLevel } from "../../src/logger.ts";

setLogLevel("silent");

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
      for (const statement of MIGRATIONS[tag]!.split("--> statement-breakpoint"))
        if (statement.trim()) db.exec(statement);
      db.query("INSERT INTO __migrations (tag, applied_at) VALUES (?, 0)").run(tag);
    }
    db.exec("INSERT INTO projects (name, created_at) VALUES ('site', 0)");
    db.exec(
      "INSERT INTO api_tokens (name, kind, project_id, prefix, hash, created_at) VALUES ('old web page', 'public', 1, 'sb_old', 'h', 0), ('old backend', 'full', NULL, 'sb_full', 'h2', 0)",
    );
    migrate(db);
    expect(db.query("SELECT name, may_notify AS mayNotify FROM api_tokens ORDER BY id").all()).toEqual([
      { name: "old web page", mayNotify: 1 },
      { name: "old backend", mayNotify: 0 },
    ]);
  });

  test("integrations made before config and secrets keep their settings, and events get the default priority", () => {
    const db = new Database(":memory:");
    const before = journal.entries.findIndex((e) => e.tag === "0011_integrations_routing_digests");
    db.exec("CREATE TABLE __migrations (tag TEXT PRIMARY KEY, applied_at INTEGER NOT NULL)");
    for (const { tag } of journal.entries.slice(0, before)) {
      for (const statement of MIGRATIONS[tag]!.split("--> statement-breakpoint"))
        if (statement.trim()) db.exec(statement);
      db.query("INSERT INTO __migrations (tag, applied_at) VALUES (?, 0)").run(tag);
    }
    db.exec("INSERT INTO projects (name, created_at) VALUES ('p', 0)");
    db.exec("INSERT INTO channels (project_id, name, created_at) VALUES (1, 'c', 0)");
    db.exec("INSERT INTO events (project_id, channel_id, event, ts, received_at) VALUES (1, 1, 'old', 0, 0)");
    db.exec(`INSERT INTO integrations (project_id, kind, name, url, topic, secret, created_at) VALUES
      (1, 'webhook', 'hook', 'https://example.com/hook', NULL, 'whsec_abc', 0),
      (1, 'ntfy', 'phone', 'https://ntfy.sh', 'alerts', NULL, 0),
      (1, 'ntfy', 'private', 'https://ntfy.example.com', 'ops', 'tk_1', 0),
      (1, 'discord', 'd', 'https://discord.com/api/webhooks/1/x', NULL, NULL, 0),
      (1, 'slack', 's', 'https://hooks.slack.com/services/T/B/x', NULL, NULL, 0)`);
    migrate(db);
    const rows = db
      .query<{ kind: string; config: string; secrets: string; filter: string | null }, []>(
        "SELECT kind, config, secrets, filter FROM integrations ORDER BY id",
      )
      .all();
    expect(rows.map((r) => [r.kind, JSON.parse(r.config), JSON.parse(r.secrets), r.filter])).toEqual([
      ["webhook", { url: "https://example.com/hook" }, { secret: "whsec_abc" }, null],
      ["ntfy", { url: "https://ntfy.sh", topic: "alerts" }, {}, null],
      ["ntfy", { url: "https://ntfy.example.com", topic: "ops" }, { token: "tk_1" }, null],
      ["discord", {}, { webhook_url: "https://discord.com/api/webhooks/1/x" }, null],
      ["slack", {}, { webhook_url: "https://hooks.slack.com/services/T/B/x" }, null],
    ]);
    expect(db.query("SELECT priority FROM events").all()).toEqual([{ priority: 3 }]);
  });

  test("accounts made before roles, all members who could do everything but the owner's part, become admins", () => {
    const db = new Database(":memory:");
    const before = journal.entries.findIndex((e) => e.tag === "0013_teams");
    db.exec("CREATE TABLE __migrations (tag TEXT PRIMARY KEY, applied_at INTEGER NOT NULL)");
    for (const { tag } of journal.entries.slice(0, before)) {
      for (const statement of MIGRATIONS[tag]!.split("--> statement-breakpoint"))
        if (statement.trim()) db.exec(statement);
      db.query("INSERT INTO __migrations (tag, applied_at) VALUES (?, 0)").run(tag);
    }
    db.exec(
      "INSERT INTO users (username, password_hash, role, created_at, updated_at) VALUES ('boss', 'h', 'owner', 0, 0), ('ann', 'h', 'member', 0, 0)",
    );
    db.exec(
      "INSERT INTO api_tokens (name, kind, prefix, hash, created_at) VALUES ('laptop', 'full', 'sb_a', 'h', 0), ('laptop', 'full', 'sb_b', 'h', 0)",
    );
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
    db.query("DELETE FROM meta WHERE key LIKE 'schema.%'").run();
    expect(() => migrate(db)).toThrow(/newer Signalboard/);
  });

  test("record which version migrated and the oldest that may run on what it left", () => {
    const db = new Database(":memory:");
    migrate(db);
    const meta = () =>
      Object.fromEntries(
        db
          .query<{ key: string; value: string }, []>("SELECT key, value FROM meta WHERE key LIKE 'schema.%'")
          .all()
          .map((r) => [r.key, r.value]),
      );
    expect(meta()).toEqual({
      [SCHEMA_META.migratedBy]: pkg.version,
      [SCHEMA_META.oldestCompatible]: OLDEST_COMPATIBLE,
    });
    // A database an earlier version migrated, without the record, gets it at the next start.
    db.query("DELETE FROM meta WHERE key LIKE 'schema.%'").run();
    expect(migrate(db)).toEqual([]);
    expect(meta()[SCHEMA_META.migratedBy]).toBe(pkg.version);
  });

  test("an older binary runs on a newer schema its version says it may run on, and refuses one that says otherwise, in one line", () => {
    const db = new Database(":memory:");
    migrate(db);
    // What a later version leaves after an expanding migration, and after a contracting one.
    db.query("INSERT INTO __migrations (tag, applied_at) VALUES ('9999_future', 0)").run();
    const record = (by: string, oldest: string) => {
      db.query("UPDATE meta SET value = ? WHERE key = ?").run(by, SCHEMA_META.migratedBy);
      db.query("UPDATE meta SET value = ? WHERE key = ?").run(oldest, SCHEMA_META.oldestCompatible);
    };
    record("9.1.0", pkg.version);
    expect(migrate(db)).toEqual([]);
    record("9.1.0", "9.0.0");
    let message = "";
    try {
      migrate(db);
    } catch (error) {
      message = (error as Error).message;
      expect(error).toBeInstanceOf(MigrationError);
    }
    expect(message).toBe(
      `the database was migrated by Signalboard 9.1.0, which runs with versions 9.0.0 and later only (migrations 9999_future); this binary is ${pkg.version}: run 9.1.0 or later, or restore the backup taken before the upgrade to go back`,
    );
    expect(message).not.toContain("\n");
  });

  test("versions compare by number", () => {
    expect(compareVersions("0.10.0", "0.9.9")).toBe(1);
    expect(compareVersions("1.2.3", "1.2.3")).toBe(0);
    expect(compareVersions("1.2.3-rc.1", "1.2.4")).toBe(-1);
  });
});
