// Alert notices survive a SIGKILL: rules flip between firing and back while the server is killed
// at a random moment, again and again. After each restart the runner goes on from what the
// database holds, and every rule's notices still alternate (firing, resolved, firing, ...), one per
// change: a change of state and its notice are written in one transaction, so a kill leaves both
// or neither. The last notice of each rule says the state the rule is in.
import { expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { databaseFile, eventually, tempDir, withDatabase } from "../helpers.ts";
import { PROGRAM, newToken, serve } from "./process.ts";

const RULES = 40;
const KILLS = 4;

test("a kill in the middle of alert transitions leaves one notice per change", async () => {
  const dataDir = tempDir();
  const token = await newToken(dataDir, "crash");
  const api = (url: string, path: string, body: unknown, method = "POST") =>
    fetch(url + path, {
      method,
      headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/json" },
      body: JSON.stringify(body),
    });
  const args = ["--data-dir", dataDir, "--alert-interval", "0.05"];
  let server = await serve(PROGRAM, args);
  await api(server.url, "/send-metric", { title: "Queue depth", value: 0 });
  for (let i = 0; i < RULES; i++)
    expect(
      (
        await api(server.url, "/v1/alerts", {
          project: "default",
          name: `Queue ${i}`,
          kind: "metric",
          metric: "Queue depth",
          above: 100,
        })
      ).status,
    ).toBe(200);

  for (let kill = 0; kill < KILLS; kill++) {
    // The metric goes up and down; the runner writes a burst of changes each time; the kill lands among them.
    const flipping = (async () => {
      for (let i = 0; ; i++) {
        const res = await api(server.url, "/send-metric", { title: "Queue depth", value: i % 2 ? 10 : 140 }).catch(
          () => null,
        );
        if (!res) return;
        await Bun.sleep(40);
      }
    })();
    await Bun.sleep(300 + Math.random() * 700);
    server.proc.kill("SIGKILL");
    await server.proc.exited;
    await flipping;
    server = await serve(PROGRAM, args);
  }
  // At rest: the value high, every rule firing.
  expect((await api(server.url, "/send-metric", { title: "Queue depth", value: 140 })).status).toBe(200);
  await eventually(async () => {
    const rules = (
      (await (await fetch(`${server.url}/v1/alerts`, { headers: { Authorization: `Bearer ${token}` } })).json()) as {
        alerts: { state: string }[];
      }
    ).alerts;
    expect(rules.map((r) => r.state)).toEqual(Array(RULES).fill("firing"));
  }, 10_000);
  await server.stop();

  const { notices, rules } = withDatabase(databaseFile(dataDir), (db) => ({
    notices: db
      .query<{ rule: number; state: string }, []>(
        "SELECT json_extract(tags, '$.alert') AS rule, json_extract(tags, '$.state') AS state FROM events WHERE event LIKE 'Queue %' ORDER BY id",
      )
      .all(),
    rules: db.query<{ id: number; state: string }, []>("SELECT id, state FROM alerts").all(),
  }));
  let changes = 0;
  for (const rule of rules) {
    const states = notices.filter((n) => n.rule === rule.id).map((n) => n.state);
    changes += states.length;
    // Alternating from "firing", no change told twice, none lost: the last is the rule's state.
    expect({ rule: rule.id, states }).toEqual({
      rule: rule.id,
      states: states.map((_, i) => (i % 2 ? "resolved" : "firing")),
    });
    expect({ rule: rule.id, last: states.at(-1) }).toEqual({
      rule: rule.id,
      last: rule.state === "firing" ? "firing" : "resolved",
    });
  }
  console.log(`${KILLS} kills: ${changes} changes of state told, each once`);
  rmSync(dataDir, { recursive: true, force: true });
});
