// signalboard copy between SQLite and PostgreSQL, both ways: an instance with something in every
// table goes SQLite → PostgreSQL → SQLite and comes back row for row; on each copy its token, its
// passwords, its sessions and its push device (with the VAPID keys) work, and events, charts,
// funnels, searches and saved settings answer as on the source. A target that holds data is
// refused without --force and replaced with it; a copy that does not match leaves the target as
// it was; a source written to during the copy gives one moment of it.
import { Database } from "bun:sqlite";
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { SQL } from "bun";
import { copyPlan, coverage } from "../../src/store/copy/plan.ts";
import { migrate } from "../../src/store/pg/migrate.ts";
import { PROGRAM, run, start } from "../e2e/process.ts";
import {
  Agent,
  call,
  databaseFile,
  eventually,
  notifierIdle,
  peek,
  post,
  searchIndexed,
  signedIn,
  startTestServer,
  storeArgs,
  type TestServer,
  tempDir,
} from "../helpers.ts";
import { createDatabase, dropDatabase } from "../pg-cluster.ts";
import { type PushService, startPushService } from "../push-service.ts";
import { type Receiver, startReceiver } from "../receiver.ts";

const CLUSTER = process.env.SIGNALBOARD_TEST_POSTGRES;
const BASE = "https://sb.example.com";
// The push service and the webhook receiver are on this machine: allowed as an operator would.
const SQLITE = {
  "database-url": undefined,
  "base-url": BASE,
  "notify-retry-base": "100ms",
  "outbound-allow": "127.0.0.1",
};
const OWNER = { username: "olive", password: "owner password 1" };
const MEMBER = { username: "max", password: "member password 2" };
const HOUR = 3_600;
/** Event times: whole hours some days back, so a chart's buckets are the same whenever the test runs. */
const T0 = Math.floor(Date.now() / 1000 / HOUR) * HOUR - 3 * 24 * HOUR;

/** The tables the seed below puts rows in: every table there is as this test is written. */
const SEEDED = [
  "projects",
  "channels",
  "events",
  "event_tags",
  "metrics",
  "metric_history",
  "profiles",
  "groups",
  "group_members",
  "api_tokens",
  "token_projects",
  "meta",
  "users",
  "user_projects",
  "audit_log",
  "sessions",
  "push_subscriptions",
  "integrations",
  "deliveries",
  "delivery_attempts",
  "digests",
  "idempotency_keys",
  "charts",
  "dashboards",
  "alerts",
];

const copy = (args: string[]) => run(PROGRAM, ["copy", ...args]);
const pgTables = copyPlan("sqlite", "postgresql").tables;

/** Every copied table's rows (meta's own keys left out), values as SQLite holds them, in one order. */
async function dump(where: { file: string } | { url: string }): Promise<Record<string, unknown[]>> {
  const out: Record<string, unknown[]> = {};
  const normal = (row: Record<string, unknown>, bigints: Set<string>) =>
    Object.fromEntries(
      Object.entries(row).map(([k, v]) => [
        k,
        typeof v === "boolean" ? Number(v) : bigints.has(k) && v !== null ? Number(v) : v,
      ]),
    );
  if ("file" in where) {
    const db = new Database(where.file, { readonly: true });
    for (const t of pgTables) {
      const columns = t.read.map((c) => `"${c.name}"`).join(", ");
      out[t.name] = (db.query(`SELECT ${columns} FROM "${t.name}"`).all() as Record<string, unknown>[]).map((r) =>
        normal(r, new Set()),
      );
    }
    db.close();
  } else {
    const sql = new SQL(where.url, { max: 1 });
    for (const t of pgTables) {
      const columns = t.read.map((c) => `"${c.name}"`).join(", ");
      const bigints = new Set(t.write.filter((c) => c.target.getSQLType() === "bigint").map((c) => c.name));
      out[t.name] = ((await sql.unsafe(`SELECT ${columns} FROM "${t.name}"`)) as Record<string, unknown>[]).map((r) =>
        normal({ ...r }, bigints),
      );
    }
    await sql.close();
  }
  for (const [name, rows] of Object.entries(out)) {
    const kept =
      name === "meta"
        ? rows.filter((r) => !/^(schema\.|search\.|access_version)/.test(String((r as { key: string }).key)))
        : rows;
    out[name] = kept.map((r) => JSON.stringify(r)).sort();
  }
  return out;
}

/** An instance with rows in every table: accounts, tokens, events, metrics, profiles, charts, rules, integrations, devices. */
async function seed(server: TestServer, push: PushService, hook: Receiver) {
  const s = server.services;
  const owner = await s.accounts.createUser(OWNER, "owner");
  await s.projects.create("shop");
  await s.projects.create("ops");
  await s.members.add(
    owner,
    { ...MEMBER, role: "member", projects: ["shop"] },
    { userId: owner.id, name: owner.username, ip: null },
  );
  const web = await s.tokens.create({ name: "web", kind: "public", project: "shop", mayNotify: true });
  await s.tokens.create({ name: "shop only", projects: ["shop"] });
  await s.projects.setRetention("shop", 365);
  const send = (body: Record<string, unknown>, headers?: Record<string, string>) =>
    call(server, { path: "/v1/log", body: { project: "shop", ...body }, headers });
  for (let i = 0; i < 12; i++) {
    const user = `u${i % 4}`;
    expect(
      (
        await send({
          channel: "web",
          event: "Signed up",
          user_id: user,
          tags: { plan: i % 2 ? "pro" : "free", n: i },
          timestamp: T0 + i * HOUR,
        })
      ).status,
    ).toBe(200);
    if (i % 3 === 0)
      await send({
        channel: "billing",
        event: "Paid",
        user_id: user,
        description: "Café **crème**",
        parser: "markdown",
        icon: "💰",
        tags: { amount: 9.5 },
        timestamp: T0 + i * HOUR + 600,
      });
  }
  expect(
    (await send({ channel: "web", event: "Retried", timestamp: T0 }, { "Idempotency-Key": "retry-1" })).status,
  ).toBe(200);
  for (const value of [3, 5]) await post(server, "/send-metric", { project: "shop", title: "Queue", value });
  await post(server, "/send-metric", { project: "shop", title: "Queue", value: 2, increment: true });
  await post(server, "/v1/insight", { project: "shop", title: "Status", value: "green", icon: "🟢" });
  await post(server, "/v1/identify", {
    project: "shop",
    user_id: "u1",
    properties: { plan: "pro", name: "Ada Lovelace" },
  });
  await post(server, "/v1/group", { project: "shop", group_id: "acme", user_id: "u1", properties: { seats: 12 } });
  const chart = {
    kind: "series",
    name: "Sign-ups",
    definition: { event: "Signed up", group_by: "tag:plan", last_days: 7 },
    position: 1,
  };
  expect((await call(server, { path: "/v1/charts", body: { project: "shop", ...chart } })).status).toBe(200);
  const funnel = {
    kind: "funnel",
    name: "To paid",
    definition: { steps: ["Signed up", "Paid"], window: 86_400, last_days: 7 },
    position: 0,
  };
  expect((await call(server, { path: "/v1/charts", body: { project: "shop", ...funnel } })).status).toBe(200);
  const integration = await call(server, {
    path: "/v1/integrations",
    body: {
      project: "shop",
      kind: "webhook",
      name: "hook",
      config: { url: `${hook.url}/hook`, secret: "whsec_copied_with_the_rest" },
    },
  });
  expect(integration.status).toBe(200);
  await s.digests.create({
    project: "shop",
    frequency: "daily",
    hour: 8,
    time_zone: "Europe/Paris",
    integrations: [integration.json.integration.id],
  });
  const device = push.subscribe();
  await s.devices.register(owner, { endpoint: device.endpoint, keys: device.keys, deviceName: "Olive's phone" });
  // A notify event: deliveries to the device and the webhook, each with its attempt.
  expect((await send({ channel: "billing", event: "Big order", notify: true }, {})).status).toBe(200);
  await eventually(() => expect(push.messagesFor(device.id).length).toBe(1));
  const rule = {
    name: "Nightly backup",
    kind: "absence",
    filter: { channel: "cron", event: "Backup done" },
    period: HOUR,
    grace: 60,
  };
  expect((await call(server, { path: "/v1/alerts", body: { project: "ops", ...rule } })).status).toBe(200);
  await s.alerts.runner.round(Date.now() + 3 * HOUR * 1000); // overdue: it fires, and says so
  await notifierIdle(server);
  // Ids handed out and deleted since: the copy's ids must not hand them out again.
  await s.projects.create("gone");
  await post(server, "/v1/log", { project: "gone", channel: "c", event: "Soon deleted" });
  await s.projects.deleteProject("gone");
  const agent = await signedIn(server, OWNER);
  return { device, web: web.token, agent };
}

describe.skipIf(!CLUSTER)("signalboard copy between SQLite and PostgreSQL", () => {
  let push: PushService;
  let hook: Receiver;
  let source: TestServer;
  let seeded: Awaited<ReturnType<typeof seed>>;
  let vapidKey: string;
  let lastEventId: number;
  const databases: string[] = [];
  const dirs: string[] = [];
  const newDatabase = async () => {
    const url = await createDatabase(CLUSTER!);
    databases.push(url);
    return url;
  };

  beforeAll(async () => {
    push = await startPushService();
    hook = await startReceiver();
    source = await startTestServer(SQLITE);
    seeded = await seed(source, push, hook);
    vapidKey = (await peek<{ value: string }>(source, "SELECT value FROM meta WHERE key = 'vapid.public_key'"))[0]!
      .value;
    lastEventId = (await peek<{ seq: number }>(source, "SELECT seq FROM sqlite_sequence WHERE name = 'events'"))[0]!
      .seq;
    await source.stop(); // what it holds now is what every copy below must carry
  });

  afterAll(async () => {
    push.stop();
    hook.stop();
    rmSync(source.dataDir, { recursive: true, force: true });
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
    for (const url of databases) await dropDatabase(CLUSTER!, url);
  });

  test("SQLite → PostgreSQL → SQLite: every row comes back, and each copy answers and signs in as the source did", async () => {
    // Something in every table the instance is made of, so the round trip below checks them all.
    const before = await dump({ file: databaseFile(source.dataDir) });
    for (const table of SEEDED) expect([table, before[table]!.length > 0]).toEqual([table, true]);

    const pg = await newDatabase();
    const there = await copy(["--data-dir", source.dataDir, "--to", pg]);
    expect(there.stderr).toContain("to PostgreSQL at");
    expect(there.code).toBe(0);
    // Progress: a line per table with its rows, readable in a log (no control characters).
    expect(there.stderr).toMatch(/^ {2}events +\d+ rows$/m);
    expect(there.stderr).toMatch(/^ {2}api_tokens +3 rows$/m);
    expect(there.stderr).not.toContain("\r");
    expect(there.stdout).toMatch(/^events +\d+ +\d+ *$/m);
    expect(there.stdout).toContain("every table's count matches the source's");
    expect(await dump({ url: pg })).toEqual(before);
    // The indexes set aside while the rows went in are all back, as the migrations make them.
    const fresh = await newDatabase();
    const migrated = new SQL(fresh, { max: 1 });
    await migrate(migrated);
    await migrated.close();
    const indexes = "SELECT indexname, indexdef FROM pg_indexes WHERE schemaname = current_schema() ORDER BY 1";
    expect(await sqlOn(pg, indexes)).toEqual(await sqlOn(fresh, indexes));

    const back = tempDir();
    dirs.push(back);
    const again = await copy(["--database-url", pg, "--to", back]);
    expect(again.code).toBe(0);
    expect(await dump({ file: databaseFile(back) })).toEqual(before);

    const original = await startTestServer(SQLITE, source.dataDir);
    const copies = [await startTestServer({ ...SQLITE, "database-url": pg }), await startTestServer(SQLITE, back)];
    try {
      await searchIndexed(original);
      await searchIndexed(copies[1]!);
      const answers = async (server: TestServer) => {
        const ask = async (path: string) => {
          const res = await call({ url: server.url, token: source.token }, { path });
          expect(res.status).toBe(200); // the source's token
          return res.json;
        };
        const range = `from=${T0 - HOUR}&to=${T0 + 24 * HOUR}`;
        return {
          series: await ask(`/v1/analytics/series?project=shop&${range}&interval=hour&group_by=tag:plan`),
          users: await ask(`/v1/analytics/series?project=shop&${range}&interval=day&measure=users`),
          funnel: await ask(`/v1/analytics/funnel?project=shop&${range}&step=Signed%20up&step=Paid&window=86400`),
          search: (await ask("/v1/events?project=shop&q=creme")).events.map((e: { id: number }) => e.id),
          tagged: (await ask("/v1/events?project=shop&tag=plan:pro")).events.map((e: { id: number }) => e.id),
          people: await ask("/v1/users?project=shop&q=lovelace"),
          charts: (await ask("/v1/charts?project=shop")).charts,
          metrics: await ask("/v1/metrics?project=shop"),
          history: await ask("/v1/metrics/history?project=shop&title=Queue"),
          alerts: (await ask("/v1/alerts?project=ops")).alerts.map((a: Record<string, unknown>) => ({
            ...a,
            last_checked: null,
          })),
          integrations: (await ask("/v1/integrations?project=shop")).integrations,
          export: (await run(PROGRAM, ["export", "--project", "shop", ...storeArgs(server)])).stdout,
        };
      };
      const expected = await answers(original);
      expect(expected.funnel.steps.map((s: { users: number }) => s.users)).toEqual([4, 4]);
      expect(expected.search.length).toBe(4);
      expect(expected.export.split("\n").length).toBeGreaterThan(15);
      expect(expected.alerts[0].state).toBe("firing");
      for (const copied of copies) {
        expect(await answers(copied)).toEqual(expected);

        // Passwords, and a session signed in on the source.
        await signedIn(copied, OWNER);
        await signedIn(copied, MEMBER);
        const carried = new Agent(copied.url);
        carried.cookies = new Map(seeded.agent.cookies);
        expect((await carried.request("/p/shop")).status).toBe(200);
        // The public token, within its project only.
        expect(
          (
            await post({ url: copied.url, token: seeded.web }, "/v1/log", {
              project: "shop",
              channel: "web",
              event: "Hi",
            })
          ).status,
        ).toBe(200);
        expect(
          (
            await post({ url: copied.url, token: seeded.web }, "/v1/log", {
              project: "ops",
              channel: "web",
              event: "Hi",
            })
          ).status,
        ).toBe(403);

        // The device hears a new event, signed with the source's VAPID key; ids go on after every id the source handed out.
        const heard = push.messagesFor(seeded.device.id).length;
        const sent = await post({ url: copied.url, token: source.token }, "/v1/log", {
          project: "shop",
          channel: "billing",
          event: `After the copy ${copied.url}`,
          notify: true,
        });
        expect(sent.status).toBe(200);
        expect(sent.json.id).toBeGreaterThan(lastEventId);
        await eventually(() => expect(push.messagesFor(seeded.device.id).length).toBe(heard + 1));
        const message = push.received.filter((r) => r.device === seeded.device.id).at(-1)!;
        expect(message.message.title).toContain("After the copy");
        expect(message.headers.authorization).toEndWith(`k=${vapidKey}`);
        expect(push.rejected).toEqual([]);
        // Other ids go on too.
        expect((await copied.services.projects.create("brand-new")).name).toBe("brand-new");
      }
    } finally {
      await Promise.all([...copies.map((c) => c.close()), original.stop()]);
    }
  }, 300_000);

  test("a target that holds data is refused, and replaced with --force", async () => {
    const pg = await newDatabase();
    expect((await copy(["--data-dir", source.dataDir, "--to", pg])).code).toBe(0);
    const other = await startTestServer({ ...SQLITE, "database-url": pg });
    await other.services.projects.create("only-there");
    await other.stop();
    const projects = async () => (await sqlOn(pg, "SELECT name FROM projects ORDER BY name")).map((r) => r.name);
    expect(await projects()).toContain("only-there");

    const refused = await copy(["--data-dir", source.dataDir, "--to", pg]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/the target already holds data \([^)]*projects: \d+ rows/);
    expect(refused.stderr).toContain("add --force");
    expect(await projects()).toContain("only-there");

    const forced = await copy(["--data-dir", source.dataDir, "--to", pg, "--force"]);
    expect(forced.code).toBe(0);
    expect(await projects()).not.toContain("only-there");
    expect(await dump({ url: pg })).toEqual(await dump({ file: databaseFile(source.dataDir) }));

    // The same into an SQLite data directory, from PostgreSQL.
    const dir = tempDir();
    dirs.push(dir);
    const local = await startTestServer(SQLITE, dir);
    await local.services.projects.create("only-here");
    await local.stop();
    const refusedHere = await copy(["--database-url", pg, "--to", dir]);
    expect(refusedHere.code).toBe(2);
    expect(refusedHere.stderr).toContain("the target already holds data");
    const names = () => {
      const db = new Database(databaseFile(dir), { readonly: true });
      const rows = db.query("SELECT name FROM projects").all();
      db.close();
      return rows;
    };
    expect(names()).toContainEqual({ name: "only-here" });
    expect((await copy(["--database-url", pg, "--to", dir, "--force"])).code).toBe(0);
    expect(names()).not.toContainEqual({ name: "only-here" });
    expect(await dump({ file: databaseFile(dir) })).toEqual(await dump({ url: pg }));
  });

  test("a copy whose counts do not match says which, exits 1 and leaves the target as it was", async () => {
    const pg = await newDatabase();
    const sql = new SQL(pg, { max: 1 });
    await migrate(sql);
    // The target's own trigger quietly drops one kind of row, as a broken target would.
    await sql.unsafe("CREATE FUNCTION drop_row() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RETURN NULL; END $$");
    await sql.unsafe(
      "CREATE TRIGGER drop_token_notes BEFORE INSERT ON audit_log FOR EACH ROW WHEN (NEW.action = 'token.created') EXECUTE FUNCTION drop_row()",
    );
    const failed = await copy(["--data-dir", source.dataDir, "--to", pg]);
    expect(failed.code).toBe(1);
    expect(failed.stdout).toMatch(/^audit_log +\d+ +\d+ +differs$/m);
    expect(failed.stderr).toMatch(
      /error: the copy does not match the source \(audit_log: \d+ in the source, \d+ copied\); the target was left as it was\./,
    );
    expect(await sqlOn(pg, "SELECT count(*)::int AS n FROM projects")).toEqual([{ n: 0 }]);
    await sql.unsafe("DROP TRIGGER drop_token_notes ON audit_log");
    await sql.close();
    expect((await copy(["--data-dir", source.dataDir, "--to", pg])).code).toBe(0);
  });

  test("a migrated PostgreSQL database holds nothing the copy leaves behind; a table added by hand stops the copy", async () => {
    const pg = await newDatabase();
    const sql = new SQL(pg, { max: 1 });
    await migrate(sql);
    const rows = (await sql.unsafe(
      "SELECT table_name AS t, column_name AS c FROM information_schema.columns WHERE table_schema = current_schema()",
    )) as { t: string; c: string }[];
    const actual = new Map<string, Set<string>>();
    for (const { t, c } of rows) actual.set(t, (actual.get(t) ?? new Set()).add(c));
    expect(coverage("target", actual, copyPlan("sqlite", "postgresql").tables, () => false)).toEqual([]);

    await sql.unsafe("CREATE TABLE gadgets (id integer PRIMARY KEY)");
    await sql.close();
    const dir = tempDir();
    dirs.push(dir);
    const refused = await copy(["--database-url", pg, "--to", dir]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain("the source has a table gadgets that this version does not know how to copy");
  });

  for (const direction of ["SQLite → PostgreSQL", "PostgreSQL → SQLite"] as const)
    test(`${direction}, with the source's server taking events during the copy: one moment of it, nothing torn`, async () => {
      const fromPg = direction.startsWith("PostgreSQL");
      // Enough events that the copy takes a while: imported into SQLite, as a big instance's history
      // is, and copied on to PostgreSQL for a source there (importing there checks each event first).
      const history = tempDir();
      dirs.push(history);
      const file = join(history, "history.ndjson");
      const lines = Array.from({ length: 20_000 }, (_, i) =>
        JSON.stringify({
          project: "shop",
          channel: `c${i % 5}`,
          event: `Old ${i}`,
          tags: { i, even: i % 2 === 0 },
          timestamp: T0 + i,
        }),
      );
      writeFileSync(file, lines.join("\n"));
      expect((await run(PROGRAM, ["import", file, "--data-dir", history, "--init"])).code).toBe(0);
      const sourcePg = fromPg ? await newDatabase() : null;
      if (sourcePg) expect((await copy(["--data-dir", history, "--to", sourcePg])).code).toBe(0);
      const server = await startTestServer(sourcePg ? { ...SQLITE, "database-url": sourcePg } : SQLITE, history);
      const pg = fromPg ? null : await newDatabase();
      const dir = tempDir();
      dirs.push(dir);
      try {
        const acked: { id: number; at: number }[] = [];
        let posting = true;
        const poster = async (n: number) => {
          for (let i = 0; posting; i++) {
            const res = await post(server, "/v1/log", {
              project: "shop",
              channel: "live",
              event: `Live ${n}.${i}`,
              tags: { n, i, two: "tags" },
            });
            expect(res.status).toBe(200);
            acked.push({ id: res.json.id, at: performance.now() });
          }
        };
        const posters = [poster(1), poster(2)];
        await eventually(() => expect(acked.length).toBeGreaterThan(10));
        const began = performance.now();
        const ackedBefore = acked.map((a) => a.id);
        const proc = start(PROGRAM, ["copy", ...storeArgs(server), "--to", fromPg ? dir : pg!]);
        const [stdout, stderr, code] = await Promise.all([
          new Response(proc.stdout).text(),
          new Response(proc.stderr).text(),
          proc.exited,
        ]);
        const ended = performance.now();
        posting = false;
        await Promise.all(posters);
        expect({ code, stderr, stdout }).toMatchObject({ code: 0 });
        expect(acked.filter((a) => a.at > began && a.at < ended).length).toBeGreaterThan(0);

        const sourceRows = (
          await peek<{ id: number; event: string; tags: string }>(
            server,
            "SELECT id, event, tags FROM events ORDER BY id",
          )
        ).map((r) => ({ ...r, id: Number(r.id) }));
        const copied = fromPg
          ? (new Database(databaseFile(dir), { readonly: true })
              .query("SELECT id, event, tags FROM events ORDER BY id")
              .all() as typeof sourceRows)
          : (await sqlOn(pg!, "SELECT id, event, tags FROM events ORDER BY id")).map((r) => ({
              ...(r as (typeof sourceRows)[number]),
              id: Number(r.id),
            }));
        const last = copied.at(-1)!.id;
        // Everything committed up to its moment, in order, and nothing of what came after.
        expect(copied).toEqual(sourceRows.filter((r) => r.id <= last));
        const ids = new Set(copied.map((r) => r.id));
        expect(ackedBefore.filter((id) => !ids.has(id))).toEqual([]);
        // Each event with all its tags.
        const tagCount = "SELECT count(*) AS n FROM event_tags WHERE event_id <= ?";
        const tagsThere = fromPg
          ? (new Database(databaseFile(dir), { readonly: true }).query(tagCount).get(last) as { n: number }).n
          : Number((await sqlOn(pg!, tagCount.replace("?", "$1"), [last]))[0]!.n);
        expect(tagsThere).toBe(Number((await peek<{ n: number }>(server, tagCount, last))[0]!.n));
      } finally {
        await server.close();
      }
    }, 300_000);
});

async function sqlOn(url: string, text: string, params: unknown[] = []): Promise<Record<string, any>[]> {
  const sql = new SQL(url, { max: 1 });
  try {
    return [...((await sql.unsafe(text, params)) as Record<string, any>[])];
  } finally {
    await sql.close();
  }
}
