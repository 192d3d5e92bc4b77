// Several instances on one PostgreSQL database, each a real server on its own port: what one
// commits, the others see, in order, live; what must happen once happens once. Runs in the
// PostgreSQL pass of npm test (SIGNALBOARD_TEST_POSTGRES names the throwaway cluster).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { SQL } from "bun";
import { createDatabase } from "../pg-cluster.ts";
import { Agent, call, eventually, notifierIdle, openSse, post, startTestServer, type TestServer } from "../helpers.ts";
import { type Receiver, startReceiver } from "../receiver.ts";

const CLUSTER = process.env.SIGNALBOARD_TEST_POSTGRES;

describe.skipIf(!CLUSTER)("instances sharing one PostgreSQL database", () => {
  let url: string;
  let a: TestServer;
  let b: TestServer;
  let c: TestServer;
  const auth = (s: TestServer, token = s.token) => ({ Authorization: `Bearer ${token}` });

  beforeAll(async () => {
    url = await createDatabase(CLUSTER!);
    // Started together: they migrate the same empty database at once.
    [a, b, c] = (await Promise.all(
      [0, 1, 2].map(() =>
        // outbound-allow: the webhook receiver listens on 127.0.0.1.
        startTestServer({ "database-url": url, "rate-limit-login": "4/m", "outbound-allow": "127.0.0.1" }),
      ),
    )) as [TestServer, TestServer, TestServer];
  });
  afterAll(async () => {
    await Promise.all([a, b, c].map((s) => s?.close()));
  });

  test("event ids are in commit order: three instances writing at once, a stream on a fourth view never misses one", async () => {
    const stream = await openSse(`${c.url}/v1/stream?project=default`, auth(c));
    const sent = await Promise.all(
      Array.from({ length: 300 }, (_, i) =>
        post([a, b, c][i % 3]!, "/v1/log", { project: "default", channel: "order", event: `e${i}` }).then(
          (r) => r.json.id as number,
        ),
      ),
    );
    await stream.waitFor(300);
    const seen = stream.frames.map((f) => Number(f.id));
    stream.close();
    expect(seen).toEqual([...seen].sort((x, y) => x - y)); // in id order
    expect(new Set(seen)).toEqual(new Set(sent)); // every one, once
    expect(seen.length).toBe(300);
    // And the ids have no holes: no id was given to a write that then committed after a higher one.
    const sorted = [...sent].sort((x, y) => x - y);
    expect(sorted.at(-1)! - sorted[0]!).toBe(299);
  });

  test("a tailer reading `id > last` while writers commit sees every event (sequences would skip some)", async () => {
    const sql = new SQL(url, { max: 1 });
    let last = Number((await sql`SELECT last_id FROM event_ids`)[0].last_id);
    const seen: number[] = [];
    let writing = true;
    const deadline = performance.now() + 30_000; // what it has not seen by then it will not see
    const tail = (async () => {
      while ((writing || seen.length < 600) && performance.now() < deadline) {
        const rows = (await sql`SELECT id FROM events WHERE id > ${last} ORDER BY id`) as { id: string }[];
        for (const r of rows) seen.push(Number(r.id));
        if (rows.length) last = Number(rows.at(-1)!.id);
        else await Bun.sleep(1);
      }
    })();
    const sent = await Promise.all(
      Array.from({ length: 600 }, (_, i) =>
        post([a, b, c][i % 3]!, "/v1/log", { project: "default", channel: "tail", event: `t${i}` }).then(
          (r) => r.json.id as number,
        ),
      ),
    );
    writing = false;
    await tail;
    await sql.close();
    expect(seen.filter((id) => sent.includes(id)).sort((x, y) => x - y)).toEqual([...sent].sort((x, y) => x - y));
  });

  test("an event posted to A is on B's stream and B's dashboard, and Last-Event-ID from A resumes on B", async () => {
    await a.services.accounts.createUser({ username: "owner", password: "owner password 1" }, "owner").catch(() => {});
    const browser = new Agent(b.url);
    await browser.login("owner", "owner password 1");
    const dashboard = await openSse(`${b.url}/p/default/live`, { Cookie: browser.cookieHeader() });
    const stream = await openSse(`${b.url}/v1/stream?project=default&channel=cross`, auth(b));
    const sent = await post(a, "/v1/log", { project: "default", channel: "cross", event: "From A" });
    const [frame] = await stream.waitFor(1);
    expect(JSON.parse(frame!.data).id).toBe(sent.json.id);
    await eventually(() =>
      expect(dashboard.frames.some((f) => f.event === "feed" && f.data.includes("From A"))).toBe(true),
    );
    stream.close();
    dashboard.close();

    // Two more on A while nobody listens; a client that last saw the first resumes on B.
    const missed = [
      await post(a, "/v1/log", { project: "default", channel: "cross", event: "Missed 1" }),
      await post(a, "/v1/log", { project: "default", channel: "cross", event: "Missed 2" }),
    ];
    const resumed = await openSse(`${b.url}/v1/stream?project=default&channel=cross`, {
      ...auth(b),
      "Last-Event-ID": String(sent.json.id),
    });
    const frames = await resumed.waitFor(2);
    resumed.close();
    expect(frames.map((f) => JSON.parse(f.data).event)).toEqual(["Missed 1", "Missed 2"]);
    expect(frames.map((f) => Number(f.id))).toEqual(missed.map((m) => m.json.id));
  });

  test("metric increments sent to every instance at once all count", async () => {
    const sums = await Promise.all(
      Array.from({ length: 90 }, (_, i) =>
        call([a, b, c][i % 3]!, {
          method: "PATCH",
          path: "/v1/insight",
          body: { project: "default", title: "clicks", value: { $inc: 1 } },
        }).then((r) => r.status),
      ),
    );
    expect(sums.every((s) => s === 200)).toBe(true);
    const metrics = await call(b, { path: "/v1/metrics?project=default" });
    expect(metrics.json.metrics.find((m: { title: string }) => m.title === "clicks").value).toBe(90);
  });

  test("an Idempotency-Key sent to two instances at once stores one event, and both get its answer", async () => {
    const body = { project: "default", channel: "idem", event: "Once" };
    const key = `key-${Date.now()}`;
    // Keys belong to a token: the same token, through both instances.
    const answers = await Promise.all(
      [a, b, a, b].map((s) =>
        call({ url: s.url, token: a.token }, { path: "/v1/log", body, headers: { "Idempotency-Key": key } }),
      ),
    );
    expect(answers.map((r) => r.status)).toEqual([200, 200, 200, 200]);
    expect(new Set(answers.map((r) => r.json.id)).size).toBe(1);
    const list = await call(c, { path: "/v1/events?project=default&channel=idem" });
    expect(list.json.events).toHaveLength(1);
  });

  test("a token revoked on A is refused by B at its next request, and B's open stream of it ends within a second", async () => {
    const { token, info } = await a.services.tokens.create({ name: "short-lived" });
    expect((await post(b, "/v1/log", { project: "default", channel: "x", event: "before" }, token)).status).toBe(200); // B has it cached now
    const stream = await openSse(`${b.url}/v1/stream`, auth(b, token));
    await a.services.tokens.revoke(String(info.id));
    await eventually(async () =>
      expect((await post(b, "/v1/log", { project: "default", channel: "x", event: "after" }, token)).status).toBe(401),
    );
    await eventually(() => expect(stream.ended).toBe(true));
  });

  test("a member removed on A is signed out on B", async () => {
    await a.services.accounts.createUser({ username: "leaver", password: "leaver password 1" }, "member");
    const browser = new Agent(b.url);
    await browser.login("leaver", "leaver password 1");
    expect((await browser.request("/settings/account")).status).toBe(200);
    const owner = (await a.services.accounts.list()).find((u) => u.role === "owner")!;
    const leaver = (await a.services.accounts.list()).find((u) => u.username === "leaver")!;
    await a.services.members.remove(leaver.id, owner);
    expect((await browser.request("/settings/account")).status).toBe(303);
  });

  test("failed sign-ins are limited across instances: the limit holds however they are spread", async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 6; i++) {
      const browser = new Agent([a, b, c][i % 3]!.url);
      const res = await browser.login("nobody", "wrong password 1");
      statuses.push(res.status);
    }
    expect(statuses.slice(0, 4)).toEqual([401, 401, 401, 401]);
    expect(statuses.slice(4)).toEqual([429, 429]);
  });

  test("the VAPID keys are made once, whichever instances ask first", async () => {
    const keys = await Promise.all([a, b, c].map((s) => s.services.vapid()));
    expect(new Set(keys.map((k) => k.publicKey)).size).toBe(1);
  });

  test("housekeeping runs on one instance at a time", async () => {
    let inside = 0;
    let most = 0;
    const job = async () => {
      inside++;
      most = Math.max(most, inside);
      await Bun.sleep(200);
      inside--;
    };
    const ran = await Promise.all(
      [a, b, c].map((s) => (s.store.shared ? s.store.shared.asLeader("test-job", job) : Promise.resolve(false))),
    );
    expect(most).toBe(1);
    expect(ran.filter(Boolean).length).toBeGreaterThanOrEqual(1);
    expect((await Promise.all([a.services.housekeep(), b.services.housekeep()])).length).toBe(2);
  });

  test("a notification is delivered once, though every instance works the queue", async () => {
    const receiver: Receiver = await startReceiver();
    try {
      await a.services.integrations.create({
        project: "default",
        kind: "webhook",
        name: "once",
        config: { url: `${receiver.url}/hook` },
      });
      const sent = await Promise.all(
        Array.from({ length: 30 }, (_, i) =>
          post([a, b, c][i % 3]!, "/v1/log", {
            project: "default",
            channel: "alerts",
            event: `alert ${i}`,
            notify: true,
          }),
        ),
      );
      const ids = new Set(sent.map((r) => r.json.id as number));
      await eventually(() =>
        expect(receiver.requests.filter((r) => r.path === "/hook").length).toBeGreaterThanOrEqual(30),
      );
      // Every delivery settled (the queue is the instances' one database): a duplicate would have been sent by now.
      await notifierIdle(a);
      const delivered = receiver.requests
        .filter((r) => r.path === "/hook")
        .map((r) => JSON.parse(r.body).event.id as number);
      expect(delivered.length).toBe(30);
      expect(new Set(delivered)).toEqual(ids);
    } finally {
      receiver.stop();
    }
  });
});

describe.skipIf(!CLUSTER)("the first owner, when instances race", () => {
  test("the one-time set-up code makes one owner, whichever instance each attempt reaches", async () => {
    const url = await createDatabase(CLUSTER!);
    const servers = await Promise.all([0, 1].map(() => startTestServer({ "database-url": url })));
    try {
      const code = (await servers[0]!.services.accounts.setupCode())!;
      expect(await servers[1]!.services.accounts.setupCode()).toBe(code);
      const tries = await Promise.allSettled(
        servers.flatMap((s) =>
          [0, 1].map((i) => s.services.accounts.setup(code, { username: `owner${i}`, password: "owner password 1" })),
        ),
      );
      expect(tries.filter((t) => t.status === "fulfilled").length).toBe(1);
      expect((await servers[1]!.services.accounts.list()).filter((u) => u.role === "owner")).toHaveLength(1);
    } finally {
      await Promise.all(servers.map((s) => s.close()));
    }
  });
});
