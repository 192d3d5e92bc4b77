// Durability under fire: the server is killed with SIGKILL while clients post events as fast as
// they can. After a restart, every event that was answered 200 must be stored, exactly once;
// nothing may be stored twice. Once with synchronous=full, once with normal.
import { describe, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { databaseFile, eventually, tempDir, withDatabase } from "../helpers.ts";
import { PROGRAM, newToken, serve } from "./process.ts";

const CLIENTS = 32;
/** Events answered before the kill: enough that the load was real. */
const LOAD = 20_000;

async function hammer(
  url: string,
  token: string,
  client: number,
  acked: Set<string>,
  stop: { now: boolean },
): Promise<void> {
  for (let seq = 0; !stop.now; seq++) {
    const name = `c${client}-${seq}`;
    try {
      const res = await fetch(`${url}/v1/log`, {
        method: "POST",
        headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/json" },
        body: JSON.stringify({ project: "default", channel: `load-${client % 4}`, event: name, tags: { client, seq } }),
      });
      if (res.status === 200) {
        const body = (await res.json()) as { event: string };
        if (body.event === name) acked.add(name);
      }
    } catch {
      return; // the server is gone
    }
  }
}

for (const sync of ["full", "normal"] as const) {
  describe(`SIGKILL under load, synchronous=${sync}`, () => {
    test("every acknowledged event is stored exactly once", async () => {
      const dataDir = tempDir();
      const token = await newToken(dataDir, "crash");
      const server = await serve(PROGRAM, ["--data-dir", dataDir, "--sqlite-sync", sync]);
      const acked = new Set<string>();
      const stop = { now: false };
      const clients = Array.from({ length: CLIENTS }, (_, i) => hammer(server.url, token, i, acked, stop));
      // Killed once the load is real: this many answered, and more in flight. How long that takes is
      // the machine's speed: the limit is only for a server that stopped answering.
      await eventually(() => expect(acked.size).toBeGreaterThanOrEqual(LOAD), 240_000);
      server.proc.kill("SIGKILL");
      await server.proc.exited;
      stop.now = true;
      await Promise.all(clients);

      // A restart applies the write-ahead log; then read the database as it is on disk.
      const again = await serve(PROGRAM, ["--data-dir", dataDir, "--sqlite-sync", sync]);
      await again.stop();
      const { rows, tags, events, integrity } = withDatabase(databaseFile(dataDir), (db) => ({
        rows: db
          .query<{ event: string; n: number }, []>("SELECT event, count(*) AS n FROM events GROUP BY event")
          .all(),
        tags: db.query<{ n: number }, []>("SELECT count(*) AS n FROM event_tags").get()!.n,
        events: db.query<{ n: number }, []>("SELECT count(*) AS n FROM events").get()!.n,
        integrity: db.query("PRAGMA integrity_check").get(),
      }));
      expect(integrity).toEqual({ integrity_check: "ok" });
      const stored = new Map(rows.map((r) => [r.event, r.n]));
      const missing = [...acked].filter((name) => !stored.has(name));
      const duplicated = rows.filter((r) => r.n > 1).map((r) => r.event);
      expect(missing).toEqual([]);
      expect(duplicated).toEqual([]);
      expect(tags).toBe(events * 2); // no event without its tags, no tags without their event
      console.log(
        `synchronous=${sync}: ${acked.size} acknowledged, ${events} stored (${events - acked.size} committed but not yet answered when killed)`,
      );
      rmSync(dataDir, { recursive: true, force: true });
    }, 300_000);
  });
}
