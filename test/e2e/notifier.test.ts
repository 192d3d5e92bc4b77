// The notifier inside a running server process, where its failures show as a user would see them:
// a server that stops answering, or a SIGTERM that is ignored.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { randomBytes } from "node:crypto";
import { rmSync } from "node:fs";
import { databaseFile, eventually, tempDir, withDatabase } from "../helpers.ts";
import { type PushService, startPushService } from "../push-service.ts";
import { PROGRAM, newToken, run, serve } from "./process.ts";

let push: PushService;
beforeAll(async () => {
  push = await startPushService();
});
afterAll(() => push.stop());

type Keys = { p256dh: string; auth: string };

/** Writes a device straight into the database, as an older version that did not check keys would have. */
function insertDevice(dataDir: string, endpoint: string, keys: Keys, name: string): void {
  withDatabase(
    databaseFile(dataDir),
    (db) => {
      const { id } = db.query("SELECT id FROM users ORDER BY id LIMIT 1").get() as { id: number };
      db.query(
        "INSERT INTO push_subscriptions (user_id, endpoint, p256dh, auth, device_name, created_at, refreshed_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
      ).run(id, endpoint, keys.p256dh, keys.auth, name, Date.now(), Date.now());
    },
    { write: true },
  );
}

type Delivery = { id: number; status: string; attempts: number; device: string; errors: string | null };

function deliveries(dataDir: string): Delivery[] {
  return withDatabase(
    databaseFile(dataDir),
    (db) =>
      db
        .query(
          `SELECT d.id, d.status, d.attempts, s.device_name AS device, (SELECT group_concat(a.error, ' | ') FROM delivery_attempts a WHERE a.delivery_id = d.id) AS errors
           FROM deliveries d JOIN push_subscriptions s ON s.id = d.target_id WHERE d.target = 'push' ORDER BY d.id`,
        )
        .all() as Delivery[],
  );
}

/** /healthz's status, or "no answer within 10 s". */
const healthz = (url: string) =>
  fetch(`${url}/healthz`, { signal: AbortSignal.timeout(10_000) }).then(
    (r) => r.status,
    () => "no answer within 10 s",
  );

describe("a device whose keys web-push cannot use, left in the database by an older version", () => {
  test("each try is a failed attempt with its error; the server keeps answering, serves the other devices and stops on SIGTERM", async () => {
    const dataDir = tempDir();
    const cli = (...args: string[]) => run(PROGRAM, [...args, "--data-dir", dataDir]);
    const token = await newToken(dataDir, "t");
    expect((await cli("user", "create", "alice")).code).toBe(0);
    const good = push.subscribe();
    const offCurve = randomBytes(65);
    offCurve[0] = 0x04;
    insertDevice(
      dataDir,
      `${push.url}/push/off-curve`,
      { p256dh: offCurve.toString("base64url"), auth: good.keys.auth },
      "Off the curve",
    );
    insertDevice(
      dataDir,
      `${push.url}/push/short-auth`,
      { p256dh: good.keys.p256dh, auth: randomBytes(12).toString("base64url") },
      "Short auth",
    );
    insertDevice(dataDir, good.endpoint, good.keys, "Good phone");
    const server = await serve(PROGRAM, ["--data-dir", dataDir], {
      env: {
        SIGNALBOARD_NOTIFY_RETRY_BASE: "100ms",
        SIGNALBOARD_NOTIFY_ATTEMPTS: "3",
        SIGNALBOARD_OUTBOUND_ALLOW: "127.0.0.1", // the push service
      },
    });
    try {
      const sent = await fetch(`${server.url}/v1/log`, {
        method: "POST",
        headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/json" },
        body: JSON.stringify({ project: "default", channel: "c", event: "Hello devices", notify: true }),
      });
      expect(sent.status).toBe(200);
      for (let i = 0; i < 5; i++) {
        expect(await healthz(server.url)).toBe(200);
        await Bun.sleep(100);
      }
      await eventually(() => expect(push.messagesFor(good.id).map((m) => m.title)).toEqual(["Hello devices"]));
      const settled = await eventually(() => {
        const rows = deliveries(dataDir);
        expect(rows.map((d) => [d.device, d.status, d.attempts])).toEqual([
          ["Off the curve", "failed", 3],
          ["Short auth", "failed", 3],
          ["Good phone", "sent", 1],
        ]);
        return rows;
      }, 10_000);
      expect(settled[0]!.errors).toContain("Public key is not valid for specified curve");
      expect(settled[1]!.errors).toContain("auth key should be at least 16 bytes");
      expect(await healthz(server.url)).toBe(200);
      // Three attempts each are a few log lines, not a flood.
      expect(server.logs().length).toBeLessThan(50_000);
      expect(await server.stop()).toBe(0);
    } finally {
      server.proc.kill("SIGKILL");
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
