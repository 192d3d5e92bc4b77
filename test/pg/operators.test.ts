// What an operator of instances on PostgreSQL reads and runs: the start-up line, commands given the
// instances' settings file, and a database a newer version migrated, refused in one line.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { SQL } from "bun";
import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { PROGRAM, lastLine, run, serve } from "../e2e/process.ts";
import { tempDir } from "../helpers.ts";
import { createDatabase, dropDatabase } from "../pg-cluster.ts";

const CLUSTER = process.env.SIGNALBOARD_TEST_POSTGRES;

describe.skipIf(!CLUSTER)("instances on PostgreSQL, as an operator sees them", () => {
  let database: string;
  let dir: string;
  beforeAll(async () => {
    database = await createDatabase(CLUSTER!);
    dir = tempDir();
  });
  afterAll(async () => {
    rmSync(dir, { recursive: true, force: true });
    await dropDatabase(CLUSTER!, database);
  });

  test("the start-up line names the database (its password masked), not a data directory", async () => {
    const withPassword = database.replace("postgres://signalboard@", "postgres://signalboard:s3cret@");
    const server = await serve(PROGRAM, ["--data-dir", dir, "--database-url", withPassword], {
      env: { SIGNALBOARD_LOG_LEVEL: "info", PGPASSWORD: "" },
    });
    try {
      const line = JSON.parse(
        server
          .logs()
          .split("\n")
          .find((l) => l.includes('"msg":"listening"'))!,
      );
      expect(line).toMatchObject({
        database: "postgresql",
        databaseUrl: database.replace("postgres://signalboard@", "postgres://signalboard:***@"),
      });
      expect(line).not.toHaveProperty("dataDir");
      expect(line).not.toHaveProperty("data");
      expect(server.logs()).not.toContain("s3cret");
    } finally {
      await server.stop();
    }
  });

  test("commands given the instances' settings file work on their database", async () => {
    const file = join(dir, "signalboard.env");
    writeFileSync(join(dir, "database-url"), `${database}\n`);
    writeFileSync(file, `PORT=8080\nDATABASE_URL_FILE=${join(dir, "database-url")}\n`);
    const created = await run(PROGRAM, ["token", "create", "--name", "from-file", "--env-file", file], {
      cwd: tempDir(),
    });
    expect(created.code).toBe(0);
    expect(lastLine(created.stdout)).toMatch(/^sb_/);
    expect((await run(PROGRAM, ["token", "list", "--database-url", database])).stdout).toContain("from-file");
  });

  test("a database a newer version migrated is refused in one line that says so, not as a connection problem", async () => {
    const newer = await createDatabase(CLUSTER!);
    try {
      expect((await run(PROGRAM, ["project", "list", "--database-url", newer])).code).toBe(0);
      const sql = new SQL(newer, { max: 1 });
      await sql`INSERT INTO __migrations (tag, applied_at) VALUES ('0099_future', 0)`;
      await sql`UPDATE meta SET value = '9.1.0' WHERE key = 'schema.migrated_by'`;
      await sql`UPDATE meta SET value = '9.0.0' WHERE key = 'schema.oldest_compatible'`;
      await sql.close();
      for (const command of [
        ["serve", "--port", "0", "--host", "127.0.0.1", "--data-dir", dir],
        ["token", "list"],
      ]) {
        const refused = await run(PROGRAM, [...command, "--database-url", newer]);
        expect(refused.code).toBe(1);
        const lines = refused.stderr.trim().split("\n");
        expect(lines).toHaveLength(1);
        expect(lines[0]).toStartWith(
          "error: the database was migrated by Signalboard 9.1.0, which runs with versions 9.0.0 and later only (migrations 0099_future); this binary is ",
        );
        expect(lines[0]).not.toContain("cannot use the PostgreSQL database");
      }
    } finally {
      await dropDatabase(CLUSTER!, newer);
    }
  });
});
