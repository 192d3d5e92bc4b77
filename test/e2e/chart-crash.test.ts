// A chart saved and pinned survives a SIGKILL whole or not at all: clients save charts pinned first
// on the dashboard while the server is killed, and after the restart every chart saved is there,
// those the clients were never told of included (they were the last saved: first on the dashboard).
// Made and pinned in two transactions, a kill between them left a chart nobody was told of, off the
// dashboard, made a second time by a client that retried.
import { expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { databaseFile, tempDir, withDatabase } from "../helpers.ts";
import { PROGRAM, newToken, serve } from "./process.ts";

const CLIENTS = 12;
const KILLS = 6;

/** The charts saved and the dashboard's cards, as the database holds them. */
const saved = (dataDir: string) =>
  withDatabase(databaseFile(dataDir), (db) => ({
    charts: db
      .query<{ id: number }, []>("SELECT id FROM charts ORDER BY id")
      .all()
      .map((c) => c.id),
    cards: JSON.parse(db.query<{ cards: string }, []>("SELECT cards FROM dashboards").get()?.cards ?? "[]") as (
      | number
      | string
    )[],
  }));

test("a kill among pinned chart saves leaves each chart saved and pinned, or not saved", async () => {
  const dataDir = tempDir();
  const token = await newToken(dataDir, "crash");
  const acknowledged = new Set<number>();
  let server = await serve(PROGRAM, ["--data-dir", dataDir]);
  let n = 0;
  let untold = 0;
  for (let kill = 0; kill < KILLS; kill++) {
    const url = server.url;
    const before = acknowledged.size;
    const newest = Math.max(0, ...saved(dataDir).charts);
    const clients = Array.from({ length: CLIENTS }, async () => {
      for (;;) {
        const res = await fetch(`${url}/v1/charts`, {
          method: "POST",
          headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/json" },
          body: JSON.stringify({
            project: "default",
            kind: "series",
            name: `chart ${n++}`,
            definition: { last_days: 7 },
            position: 0,
          }),
        }).catch(() => null);
        if (!res) return;
        // A full dashboard (50 cards) refuses another card, and nothing is saved: this client is done.
        if (res.status === 400 && (await res.text()).includes("at most 50 cards")) return;
        expect(res.status).toBe(200);
        acknowledged.add(((await res.json()) as { chart: { id: number } }).chart.id);
      }
    });
    // Killed once a few were saved, at a moment of the saves that follow.
    while (acknowledged.size < before + 6) await Bun.sleep(5);
    await Bun.sleep(Math.random() * 40);
    server.proc.kill("SIGKILL");
    await server.proc.exited;
    await Promise.all(clients);
    server = await serve(PROGRAM, ["--data-dir", dataDir]);
    // The charts saved in this round that nobody was told of were the last saved: first on the dashboard.
    const { charts, cards } = saved(dataDir);
    for (const id of acknowledged) expect(charts).toContain(id);
    const mine = charts.filter((id) => id > newest && !acknowledged.has(id));
    untold += mine.length;
    expect({ kill, unpinned: mine.filter((id) => !cards.includes(id)) }).toEqual({ kill, unpinned: [] });
    // The next round starts with this round's charts off the dashboard, so that it has room.
    await server.stop();
    withDatabase(
      databaseFile(dataDir),
      (db) => db.run("UPDATE dashboards SET cards = ?", [JSON.stringify(cards.filter((c) => typeof c === "string"))]),
      { write: true },
    );
    server = await serve(PROGRAM, ["--data-dir", dataDir]);
  }
  await server.stop();
  console.log(`${KILLS} kills: ${acknowledged.size} charts acknowledged, ${untold} saved untold, each pinned`);
  rmSync(dataDir, { recursive: true, force: true });
});
