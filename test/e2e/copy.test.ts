// signalboard copy from one SQLite data directory to another, as a user runs it: every copied row
// arrives, ids go on after the source's, the new directory serves the same data, and what the
// command refuses (its own database, a target that holds data, a target that is not one) it
// refuses in words, leaving nothing behind. Copies to and from PostgreSQL: test/pg/copy.test.ts.
import { Database } from "bun:sqlite";
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { copyPlan } from "../../src/store/copy/plan.ts";
import { databaseFile, post, signedIn, startTestServer, type TestServer, tempDir } from "../helpers.ts";
import { PROGRAM, run } from "./process.ts";

const SQLITE = { "database-url": undefined };
const OWNER = { username: "olive", password: "owner password 1" };
const copy = (args: string[]) => run(PROGRAM, ["copy", ...args]);

/** Every copied table's rows (meta's own keys left out), in one order. */
function dump(dir: string): Record<string, string[]> {
  const db = new Database(databaseFile(dir), { readonly: true });
  try {
    const out: Record<string, string[]> = {};
    for (const t of copyPlan("sqlite", "sqlite").tables) {
      const rows = db.query(`SELECT * FROM "${t.name}"`).all() as Record<string, unknown>[];
      out[t.name] = rows
        .filter((r) => t.name !== "meta" || !/^(schema\.|search\.)/.test(String(r.key)))
        .map((r) => JSON.stringify(r))
        .sort();
    }
    return out;
  } finally {
    db.close();
  }
}

describe("signalboard copy into another SQLite data directory", () => {
  let source: TestServer;
  const dirs: string[] = [];
  const dir = () => {
    const made = tempDir();
    dirs.push(made);
    return made;
  };

  beforeAll(async () => {
    source = await startTestServer(SQLITE);
    await source.services.accounts.createUser(OWNER, "owner");
    for (let i = 0; i < 5; i++)
      await post(source, "/v1/log", { project: "default", channel: "c", event: `E${i}`, tags: { i } });
    await post(source, "/send-metric", { project: "default", title: "Queue", value: 3 });
    await source.services.projects.create("gone");
    await post(source, "/v1/log", { project: "gone", channel: "c", event: "Soon deleted" });
    await source.services.projects.deleteProject("gone");
    // Token use is recorded every 10 s: now, so the source holds still while the tests compare it with its copies.
    await source.services.tokens.flushLastUsed();
  });

  afterAll(async () => {
    await source.close();
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  test("copies every row, while the source's server runs; the copy serves them, and ids go on after the source's", async () => {
    const target = dir();
    const done = await copy(["--data-dir", source.dataDir, "--to", target]);
    expect(done.stderr).toContain(`Copying SQLite in ${source.dataDir} to SQLite in ${target}`);
    expect(done.code).toBe(0);
    expect(done.stderr).toMatch(/^ {2}events +5 rows$/m);
    expect(done.stdout).toContain("every table's count matches the source's");
    expect(dump(target)).toEqual(dump(source.dataDir));
    // Only the database: no temporary file left beside it.
    expect(readdirSync(target)).toEqual(["signalboard.db"]);

    const copied = await startTestServer(SQLITE, target);
    try {
      expect(
        (await post({ url: copied.url, token: source.token }, "/v1/events?project=default", undefined)).status,
      ).toBe(200);
      await signedIn(copied, OWNER);
      const sent = await post({ url: copied.url, token: source.token }, "/v1/log", {
        project: "default",
        channel: "c",
        event: "After",
      });
      const [{ seq }] = new Database(databaseFile(source.dataDir), { readonly: true })
        .query("SELECT seq FROM sqlite_sequence WHERE name = 'events'")
        .all() as [{ seq: number }];
      expect(sent.json.id).toBe(seq + 1);
    } finally {
      await copied.stop();
    }
  });

  test("refuses the source's own directory, a target that holds data (unless --force), and a target that is not one", async () => {
    const own = await copy(["--data-dir", source.dataDir, "--to", join(source.dataDir, ".")]);
    expect(own.code).toBe(2);
    expect(own.stderr).toContain("a copy there would destroy what it copies");

    const target = dir();
    const other = await startTestServer(SQLITE, target);
    await other.services.projects.create("only-there");
    await other.stop();
    const refused = await copy(["--data-dir", source.dataDir, "--to", target]);
    expect(refused.code).toBe(2);
    // A server started on it made the default project; this one has another too.
    expect(refused.stderr).toMatch(/error: the target already holds data \([^)]*projects: 2 rows/);
    expect(refused.stderr).toContain("add --force to replace everything it holds with the copy");
    expect(readdirSync(target).filter((f) => f.includes("partial"))).toEqual([]);
    expect(dump(target).projects!.some((r) => r.includes("only-there"))).toBe(true);
    const forced = await copy(["--data-dir", source.dataDir, "--to", target, "--force"]);
    expect(forced.code).toBe(0);
    expect(dump(target)).toEqual(dump(source.dataDir));

    const url = await copy(["--data-dir", source.dataDir, "--to", "mysql://db/signalboard"]);
    expect(url.code).toBe(2);
    expect(url.stderr).toContain("a copy goes to a postgres:// URL or to a data directory for SQLite");
    const file = await copy(["--data-dir", source.dataDir, "--to", databaseFile(source.dataDir)]);
    expect(file.code).toBe(2);
    expect(file.stderr).toContain("is a file: give a data directory, where the copy makes signalboard.db");
    const away = await copy(["--data-dir", source.dataDir, "--to", "postgres://signalboard:secret@127.0.0.1:1/gone"]);
    expect(away.code).toBe(1);
    expect(away.stderr).toContain(
      "error: cannot use the PostgreSQL database at postgres://signalboard:***@127.0.0.1:1/gone (--to)",
    );
    const none = await copy(["--data-dir", source.dataDir]);
    expect(none.code).toBe(2);
    expect(none.stderr).toContain("--to is required");
    const empty = dir();
    const nothing = await copy(["--data-dir", empty, "--to", dir()]);
    expect(nothing.code).toBe(2);
    expect(nothing.stderr).toContain(`there is no database in ${empty} to copy`);
  });
});
