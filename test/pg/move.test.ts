// Moving a project's events from SQLite to PostgreSQL with export and import (docs/scale-out.md
// points to them for one project into an instance that has data): export from the SQLite data
// directory, import the file with DATABASE_URL set. A whole instance moves with copy (copy.test.ts).
import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { PROGRAM, run } from "../e2e/process.ts";
import { call, post, startTestServer, tempDir } from "../helpers.ts";
import { createDatabase } from "../pg-cluster.ts";

const CLUSTER = process.env.SIGNALBOARD_TEST_POSTGRES;

describe.skipIf(!CLUSTER)("moving from SQLite to PostgreSQL", () => {
  test("export from the SQLite data directory, import with --database-url: every event, tag and time arrives, once", async () => {
    const from = await startTestServer({ "database-url": undefined });
    const url = await createDatabase(CLUSTER!);
    const to = await startTestServer({ "database-url": url });
    try {
      for (let i = 0; i < 5; i++) {
        const sent = await post(from, "/v1/log", {
          project: "default",
          channel: i % 2 ? "a" : "b",
          event: `Event ${i}`,
          tags: { i, env: "prod" },
          user_id: `u${i}`,
          timestamp: 1_700_000_000 + i,
        });
        expect(sent.status).toBe(200);
      }
      const file = join(tempDir(), "default.ndjson");
      const out = await run(PROGRAM, ["export", "--project", "default", "--out", file, "--data-dir", from.dataDir]);
      expect(out.code).toBe(0);

      const imported = await run(PROGRAM, ["import", file], { env: { DATABASE_URL: url } });
      expect(imported.code).toBe(0);
      expect(imported.stdout).toContain("Imported 5 events");
      const again = await run(PROGRAM, ["import", file], { env: { DATABASE_URL: url } });
      expect(again.stdout).toContain("skipped 5 already present");

      const list = await call(to, { path: "/v1/events?project=default" });
      expect(list.json.events.map((e: { event: string }) => e.event)).toEqual([
        "Event 4",
        "Event 3",
        "Event 2",
        "Event 1",
        "Event 0",
      ]);
      expect(list.json.events[4]).toMatchObject({
        channel: "b",
        tags: { i: 0, env: "prod" },
        user_id: "u0",
        timestamp: 1_700_000_000,
        historical: true,
      });
      const tagged = await call(to, { path: "/v1/events?project=default&tag=i:3" });
      expect(tagged.json.events.map((e: { event: string }) => e.event)).toEqual(["Event 3"]);
    } finally {
      await from.close();
      await to.close();
    }
  });
});
