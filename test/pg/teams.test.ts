// The teams migration on PostgreSQL: accounts made before roles were members who could do
// everything but the owner's part; they become admins. (SQLite: test/unit/migrate.test.ts.)
import { describe, expect, test } from "bun:test";
import { SQL } from "bun";
import journal from "../../drizzle/pg/meta/_journal.json";
import { MIGRATIONS, migrate } from "../../src/store/pg/migrate.ts";
import { createDatabase, dropDatabase } from "../pg-cluster.ts";

const CLUSTER = process.env.SIGNALBOARD_TEST_POSTGRES;

describe.skipIf(!CLUSTER)("the teams migration on PostgreSQL", () => {
  test("members become admins, the owner stays the owner, and everyone still sees every project", async () => {
    const url = await createDatabase(CLUSTER!);
    const sql = new SQL(url);
    try {
      const before = journal.entries.findIndex((e) => e.tag === "0007_teams");
      await sql`CREATE TABLE __migrations (tag text PRIMARY KEY, applied_at bigint NOT NULL)`;
      for (const { tag } of journal.entries.slice(0, before)) {
        for (const statement of MIGRATIONS[tag]!.split("--> statement-breakpoint"))
          if (statement.trim()) await sql.unsafe(statement);
        await sql`INSERT INTO __migrations (tag, applied_at) VALUES (${tag}, 0)`;
      }
      await sql`INSERT INTO users (username, password_hash, role, created_at, updated_at) VALUES ('boss', 'h', 'owner', 0, 0), ('ann', 'h', 'member', 0, 0)`;
      expect(await migrate(sql)).toEqual(journal.entries.slice(before).map((e) => e.tag));
      expect([...(await sql`SELECT username, role, limited FROM users ORDER BY id`)]).toEqual([
        { username: "boss", role: "owner", limited: false },
        { username: "ann", role: "admin", limited: false },
      ]);
    } finally {
      await sql.close();
      await dropDatabase(CLUSTER!, url);
    }
  });
});
