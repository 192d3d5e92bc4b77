// Checks and their pings, in-process: every ping path (with and without /ping, by UUID and by ping
// key and slug, Uptime Kuma's push), every status they answer, the state machine (start and finish
// paired by rid, overlapping runs, exit statuses, paused), silence found by the round when the clock
// moves, and each change to down and back to up noticed exactly once in the alerts channel.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Check } from "../../src/model/check.ts";
import { MOST_CHECKS_BY_PING } from "../../src/domain/checks.ts";
import { TestClock } from "../clock.ts";
import { call, startTestApp, type TestApp } from "../helpers.ts";

const MIN = 60_000;
let server: TestApp;
let pingKey: string;
let made = 0;

beforeAll(async () => {
  server = await startTestApp(
    { "alert-interval": "3600", "rate-limit-ping": "20/m", "ping-body-limit": "1000" },
    undefined,
    { clock: new TestClock(Date.now(), { stopped: true }) },
  );
  await server.services.projects.create("ops");
  pingKey = await server.services.checks.pingKey("ops");
});
afterAll(() => server.close());

type Ev = { id: number; event: string; description: string | null; tags: Record<string, unknown>; notify: boolean };

/** A new check of its own for each test (a period of a minute, a grace of 30 s, unless told). */
async function check(more: Record<string, unknown> = {}): Promise<Check> {
  const n = ++made;
  return server.services.checks.create({ project: "ops", name: `Job ${n}`, period: 60, grace: 30, ...more });
}
const ping = (path: string, init: RequestInit = {}) => server.fetch(path, init);
/** A channel's events, oldest first, every page of them. */
async function events(channel: string): Promise<Ev[]> {
  const all: Ev[] = [];
  let cursor = "";
  do {
    const page = await call(server, { path: `/v1/events?project=ops&channel=${channel}&limit=200${cursor}` });
    all.push(...(page.json.events ?? []));
    cursor = page.json.next_cursor ? `&cursor=${encodeURIComponent(page.json.next_cursor)}` : "";
  } while (cursor);
  return all.sort((a, b) => a.id - b.id);
}
const pingsOf = async (c: Check) => (await events(c.channel)).filter((e) => e.tags.check === c.slug);
const noticesOf = async (c: Check) => (await events("alerts")).filter((e) => e.tags.check === c.slug);
const stateOf = async (c: Check) => (await server.services.checks.get(c.id)).state;
const round = () => server.services.alerts.runner.round(server.clock.now());

describe("the Healthchecks ping API", () => {
  test("every path, by UUID, with and without /ping, by HEAD, GET and POST, answers OK and logs an event", async () => {
    const c = await check();
    for (const [method, path] of [
      ["GET", `/ping/${c.uuid}`],
      ["HEAD", `/ping/${c.uuid}/start`],
      ["POST", `/ping/${c.uuid}/log`],
      ["GET", `/${c.uuid}`],
      ["POST", `/${c.uuid}/start`],
      ["GET", `/${c.uuid}/0`],
      ["GET", `/${c.uuid.toUpperCase()}/log`],
    ] as const) {
      const res = await ping(path, { method });
      expect({ path, method, status: res.status }).toEqual({ path, method, status: 200 });
      expect(res.headers.get("ping-body-limit")).toBe("1000");
      if (method !== "HEAD") expect(await res.text()).toBe("OK");
    }
    expect((await pingsOf(c)).map((e) => e.event)).toEqual([
      `${c.name}: success`,
      `${c.name}: start`,
      `${c.name}: log`,
      `${c.name}: success`,
      `${c.name}: start`,
      `${c.name}: success`,
      `${c.name}: log`,
    ]);
    expect((await pingsOf(c)).at(-2)!.tags).toMatchObject({ check: c.slug, kind: "success", "exit-status": 0 });
  });

  test("by ping key and slug, with every action; ?create=1 makes a check of a day and an hour", async () => {
    const c = await check({ slug: "nightly-backup" });
    for (const suffix of ["", "/start", "/log", "/0", "/fail"]) {
      for (const prefix of ["/ping", ""]) {
        const res = await ping(`${prefix}/${pingKey}/nightly-backup${suffix}`, { method: "POST" });
        expect({ suffix, prefix, status: res.status, body: await res.text() }).toEqual({
          suffix,
          prefix,
          status: 200,
          body: "OK",
        });
      }
    }
    expect(await pingsOf(c)).toHaveLength(10);
    expect(await stateOf(c)).toBe("down");

    const unknown = await ping(`/ping/${pingKey}/made-by-ping`);
    expect([unknown.status, await unknown.text()]).toEqual([404, "not found"]);
    const created = await ping(`/ping/${pingKey}/made-by-ping?create=1`);
    expect([created.status, await created.text()]).toEqual([200, "OK"]);
    const listed = (await server.services.checks.list("ops")).find((x) => x.slug === "made-by-ping")!;
    expect(listed).toMatchObject({
      name: "made-by-ping",
      schedule: { kind: "period", seconds: 86_400 },
      grace: 3_600,
      channel: "checks",
      state: "up",
    });
    // Made once: a second ?create=1 pings the same check.
    expect((await ping(`/${pingKey}/made-by-ping/start?create=1`)).status).toBe(200);
    expect((await server.services.checks.list("ops")).filter((x) => x.slug === "made-by-ping")).toHaveLength(1);
  });

  test("unknown UUIDs and slugs are 404 not found; a bad exit status or rid 400; an ambiguous slug 409", async () => {
    const c = await check({ slug: "twice" });
    const cases: [string, number, string][] = [
      [`/ping/${crypto.randomUUID()}`, 404, "not found"],
      [`/ping/${crypto.randomUUID()}/fail`, 404, "not found"],
      [`/${crypto.randomUUID()}`, 404, "not found"],
      [`/ping/${c.uuid}/nonsense`, 404, "not found"],
      [`/ping/not-a-uuid`, 404, "not found"],
      [`/ping/${"A".repeat(22)}/twice`, 404, "not found"],
      [`/ping/${pingKey}/Not_A_Slug`, 404, "not found"],
      [`/ping/${c.uuid}/256`, 400, "invalid exit status: it must be 0-255"],
      [`/${c.uuid}/1000`, 400, "invalid exit status: it must be 0-255"],
      [`/ping/${c.uuid}/99999999999`, 400, "invalid exit status: it must be 0-255"],
      [`/ping/${c.uuid}/${"9".repeat(400)}`, 400, "invalid exit status: it must be 0-255"],
      [`/ping/${c.uuid}?rid=not-a-uuid`, 400, "invalid rid: it must be a UUID"],
      [`/ping/${c.uuid}/start?rid=123`, 400, "invalid rid: it must be a UUID"],
    ];
    for (const [path, status, body] of cases) {
      const res = await ping(path);
      expect({ path, status: res.status, body: await res.text() }).toEqual({ path, status, body });
    }
    // A slug twice in a project (the service refuses it; left so by hand): neither is picked.
    const project = await server.services.projects.requireProject("ops");
    await server.store.checks.create(
      { ...c, uuid: crypto.randomUUID(), pushToken: "x".repeat(32), projectId: project.id },
      0,
    );
    const res = await ping(`/ping/${pingKey}/twice`);
    expect(res.status).toBe(409);
    expect(await pingsOf(c)).toEqual([]);
    // Nothing was stored for the refused ones, and the check is as it was.
    expect(await stateOf(c)).toBe("new");
  });

  test("a body is the event's description, cut at the limit; over 100 KB is 413 and stores nothing", async () => {
    const c = await check();
    await ping(`/ping/${c.uuid}/fail`, { method: "POST", body: "disk full\nsecond line" });
    await ping(`/ping/${c.uuid}/log`, { method: "POST", body: "é".repeat(800) }); // 1,600 bytes
    await ping(`/ping/${c.uuid}/log`, { method: "POST", body: `${"a".repeat(998)}€€` }); // the limit inside a €
    // Bytes that are not UTF-8 (here 1,200 stray continuation bytes) are kept as U+FFFD, up to the limit.
    await ping(`/ping/${c.uuid}/log`, { method: "POST", body: new Uint8Array(1200).fill(0x80) });
    const big = await ping(`/ping/${c.uuid}`, { method: "POST", body: "x".repeat(100 * 1024 + 1) });
    expect(big.status).toBe(413);
    const [failed, logged, euro, binary, ...rest] = await pingsOf(c);
    expect(rest).toEqual([]);
    expect(failed!.description).toBe("disk full\nsecond line");
    expect(logged!.description).toBe("é".repeat(500)); // 1,000 bytes, cut at a character's edge
    expect(euro!.description).toBe("a".repeat(998));
    expect(binary!.description).toBe("\ufffd".repeat(1000));
    expect(await stateOf(c)).toBe("down");
  });

  test("a UUID pinged too often gets 429 with Retry-After; another UUID is not held back", async () => {
    const c = await check();
    const other = await check();
    const statuses: number[] = [];
    // With and without /ping, one URL's budget.
    for (let i = 0; i < 22; i++) statuses.push((await ping(`${i % 2 ? "" : "/ping"}/${c.uuid}/log`)).status);
    expect(statuses.slice(0, 20).every((s) => s === 200)).toBe(true);
    const limited = await ping(`/ping/${c.uuid}`);
    expect(limited.status).toBe(429);
    expect(Number(limited.headers.get("retry-after"))).toBeGreaterThan(0);
    expect((await ping(`/ping/${other.uuid}`)).status).toBe(200);
  });

  test("the root paths shadow no dashboard route", async () => {
    expect((await ping("/login")).status).toBe(200);
    const res = await ping("/no-such-page", { headers: { accept: "application/json" } });
    expect(res.status).toBe(404);
    expect((await res.json()).error).toBe("not_found");
  });
});

describe("states", () => {
  test("new → up by success; start → started; finish → up with its duration; fail and exit N → down at once", async () => {
    const c = await check();
    expect(await stateOf(c)).toBe("new");
    await ping(`/ping/${c.uuid}/start`);
    expect(await stateOf(c)).toBe("started");
    await server.clock.advance(2_500);
    await ping(`/ping/${c.uuid}`);
    const up = await server.services.checks.get(c.id);
    expect(up).toMatchObject({ state: "up", lastDurationMs: 2_500 });
    expect(up.nextDue).toBe(server.clock.now() + 90_000);
    expect((await pingsOf(c)).at(-1)!.tags).toMatchObject({ kind: "success", duration: 2.5 });

    await ping(`/ping/${c.uuid}/3`);
    expect(await stateOf(c)).toBe("down");
    expect((await pingsOf(c)).at(-1)).toMatchObject({
      event: `${c.name}: exit 3`,
      tags: { kind: "exit", "exit-status": 3 },
    });
    // Down already: a retry of the failure (curl --retry) or another failure notices nothing more.
    await ping(`/ping/${c.uuid}/fail`);
    await ping(`/${c.uuid}/1`);
    const notices = await noticesOf(c);
    expect(notices.map((n) => [n.event, n.tags.state, n.notify])).toEqual([[`${c.name} is down`, "down", true]]);
    expect(notices[0]!.description).toContain("exit status 3");
    // A start while down keeps it down; only a success brings it back, noticed once.
    await ping(`/ping/${c.uuid}/start`);
    expect(await stateOf(c)).toBe("down");
    await ping(`/ping/${c.uuid}`);
    await ping(`/ping/${c.uuid}`);
    expect((await noticesOf(c)).map((n) => [n.event, n.tags.state])).toEqual([
      [`${c.name} is down`, "down"],
      [`${c.name} is up`, "up"],
    ]);
    // A log changes nothing.
    await ping(`/ping/${c.uuid}/log`);
    expect(await stateOf(c)).toBe("up");
  });

  test("starts and finishes pair by rid when runs overlap", async () => {
    const c = await check();
    const [a, b] = [crypto.randomUUID(), crypto.randomUUID()];
    await ping(`/ping/${c.uuid}/start?rid=${a}`);
    await server.clock.advance(1_000);
    await ping(`/ping/${c.uuid}/start?rid=${b}`);
    await server.clock.advance(4_000);
    await ping(`/ping/${c.uuid}?rid=${a}`); // a ran 5 s
    await server.clock.advance(1_000);
    await ping(`/ping/${c.uuid}/fail?rid=${b}`); // b ran 5 s... and failed
    await ping(`/ping/${c.uuid}?rid=${crypto.randomUUID()}`); // a finish with no start: no duration
    const finishes = (await pingsOf(c)).filter((e) => e.tags.kind !== "start");
    expect(finishes.map((e) => [e.tags.kind, e.tags.rid !== undefined, e.tags.duration])).toEqual([
      ["success", true, 5],
      ["fail", true, 5],
      ["success", true, undefined],
    ]);
    expect((await server.services.checks.get(c.id)).runs).toEqual({});
  });

  test("silence past period + grace is down, once, by the round; a success brings it up, once", async () => {
    const c = await check();
    await ping(`/ping/${c.uuid}`);
    await server.clock.advance(89_000);
    await round();
    expect(await stateOf(c)).toBe("up");
    await server.clock.advance(2_000);
    await round();
    await round();
    expect(await stateOf(c)).toBe("down");
    await ping(`/ping/${c.uuid}`);
    await round();
    const notices = await noticesOf(c);
    expect(notices.map((n) => [n.event, n.tags.why, n.notify])).toEqual([
      [`${c.name} is down`, "silent", true],
      [`${c.name} is up`, "success", true],
    ]);
    expect(notices[0]!.description).toContain("expected every 1m, grace 30s");
  });

  test("a start with no finish within grace is down: started, never finished", async () => {
    const c = await check();
    await ping(`/ping/${c.uuid}/start`);
    await server.clock.advance(31_000);
    await round();
    expect(await stateOf(c)).toBe("down");
    expect((await noticesOf(c)).map((n) => [n.event, n.tags.why])).toEqual([
      [`${c.name} is down: started, never finished`, "unfinished"],
    ]);
  });

  test("a cron check is due at its next scheduled time plus grace", async () => {
    const c = await check({ period: undefined, cron: "*/10 * * * *", tz: "Europe/Berlin", grace: 60 });
    await ping(`/ping/${c.uuid}`);
    const due = (await server.services.checks.get(c.id)).nextDue!;
    const next = Math.ceil((server.clock.now() + 1) / (10 * MIN)) * 10 * MIN;
    expect(due).toBe(next + 60_000);
  });

  test("paused, pings are logged and change nothing; resumed, it is new", async () => {
    const c = await check();
    await ping(`/ping/${c.uuid}`);
    await server.services.checks.update(c.id, { paused: true });
    expect(await stateOf(c)).toBe("paused");
    await ping(`/ping/${c.uuid}/fail`);
    await ping(`/ping/${c.uuid}/start`);
    await server.clock.advance(10 * MIN);
    await round();
    expect(await stateOf(c)).toBe("paused");
    expect(await noticesOf(c)).toEqual([]);
    expect((await pingsOf(c)).map((e) => e.tags.kind)).toEqual(["success", "fail", "start"]);
    await server.services.checks.update(c.id, { paused: false });
    expect(await stateOf(c)).toBe("new");
  });

  test("a thousand checks due at once go down in one round, each noticed once", async () => {
    const project = await server.services.projects.requireProject("ops");
    const base = server.clock.now();
    const ids: number[] = [];
    await server.store.tx(async (tx) => {
      for (let i = 0; i < 1000; i++) {
        const made = await tx.checks.create(
          {
            projectId: project.id,
            name: `Bulk ${i}`,
            slug: `bulk-${i}`,
            schedule: { kind: "period", seconds: 60 },
            grace: 0,
            channel: "bulk",
            notifyAfter: 1,
            uuid: crypto.randomUUID(),
            pushToken: crypto.randomUUID().replaceAll("-", ""),
            paused: false,
          },
          base,
        );
        await tx.checks.update(made.id, { state: "up", lastPing: base, nextDue: base + 60_000 }, base);
        ids.push(made.id);
      }
    });
    await server.clock.advance(61_000);
    await round();
    await round();
    const bulk = (await events("alerts")).filter((e) => String(e.tags.check).startsWith("bulk-"));
    expect(bulk).toHaveLength(1000);
    expect(new Set(bulk.map((e) => e.tags.check)).size).toBe(1000);
    for (const id of ids.slice(0, 5)) expect((await server.services.checks.get(id)).state).toBe("down");
  });
});

describe("Uptime Kuma push", () => {
  test("up and down by status, msg as description, ping as a number tag; unknown token 404", async () => {
    const c = await check({ push_token: "k".repeat(32) });
    for (const method of ["GET", "POST"]) {
      const res = await ping(`/api/push/${c.pushToken}?status=up&msg=fine&ping=42`, { method });
      expect([res.status, await res.json()]).toEqual([200, { ok: true }]);
    }
    expect(await stateOf(c)).toBe("up");
    await ping(`/api/push/${c.pushToken}?status=down&msg=timeout`);
    expect(await stateOf(c)).toBe("down");
    await ping(`/api/push/${c.pushToken}`);
    expect(await stateOf(c)).toBe("up");
    const logged = await pingsOf(c);
    expect(logged.map((e) => [e.tags.kind, e.description, e.tags.ping])).toEqual([
      ["success", "fine", 42],
      ["success", "fine", 42],
      ["fail", "timeout", undefined],
      ["success", "OK", undefined],
    ]);
    expect((await noticesOf(c)).map((n) => n.tags.state)).toEqual(["down", "up"]);
    for (const token of ["z".repeat(32), "short"]) {
      const res = await ping(`/api/push/${token}?status=up`);
      expect([res.status, await res.json()]).toEqual([404, { ok: false, msg: "Monitor not found or not active." }]);
    }
  });
});

describe("the ping key and changes", () => {
  test("a ping key made anew: URLs with the old one answer 404, with the new one OK", async () => {
    await server.services.projects.create("keys");
    const first = await server.services.checks.pingKey("keys");
    expect(await server.services.checks.pingKey("keys")).toBe(first);
    const c = await server.services.checks.create({ project: "keys", name: "Rotated", period: 60 });
    const urls = await server.services.checks.urls(c);
    expect(urls).toEqual({
      ping: `${server.url}/ping/${c.uuid}`,
      slug: `${server.url}/ping/${first}/rotated`,
      push: `${server.url}/api/push/${c.pushToken}?status=up&msg=OK&ping=`,
    });
    for (const url of Object.values(urls)) expect((await ping(url.slice(server.url.length))).status).toBe(200);
    expect((await ping(`/ping/${first}/rotated`)).status).toBe(200);
    const second = await server.services.checks.regeneratePingKey("keys");
    expect(second).not.toBe(first);
    expect(second).toMatch(/^[A-Za-z0-9_-]{22}$/);
    expect((await ping(`/ping/${first}/rotated`)).status).toBe(404);
    expect((await ping(`/${second}/rotated`)).status).toBe(200);
  });

  test("a changed schedule moves when it is due; a slug another check has is refused, and nothing changes", async () => {
    const c = await check({ slug: "mover" });
    const other = await check({ slug: "other" });
    await ping(`/ping/${c.uuid}`);
    const pinged = (await server.services.checks.get(c.id)).lastPing!;
    const changed = await server.services.checks.update(c.id, { period: 600, grace: 60 });
    expect(changed.nextDue).toBe(pinged + 660_000);
    const refused = await server.services.checks.update(other.id, { slug: "mover" }).catch((e) => e);
    expect(refused.issues[0].path).toBe("slug");
    expect((await server.services.checks.get(other.id)).slug).toBe("other");
    // A new time zone alone keeps the expression.
    const cron = await server.services.checks.update(c.id, { cron: "0 3 * * *", tz: "UTC" });
    expect((await server.services.checks.update(c.id, { tz: "Europe/Berlin" })).schedule).toEqual({
      kind: "cron",
      expr: "0 3 * * *",
      tz: "Europe/Berlin",
    });
    expect(cron.schedule.kind).toBe("cron");
  });

  test(`?create=1 makes no more checks once the project has ${MOST_CHECKS_BY_PING}; existing ones and the API still work`, async () => {
    // Whoever holds the ping key could otherwise make checks without end, each a row of the page.
    await server.services.projects.create("crowded");
    const key = await server.services.checks.pingKey("crowded");
    for (let i = 0; i < MOST_CHECKS_BY_PING - 1; i += 50)
      await Promise.all(
        Array.from({ length: Math.min(50, MOST_CHECKS_BY_PING - 1 - i) }, (_, j) =>
          server.services.checks.create({ project: "crowded", name: `Job ${i + j}` }),
        ),
      );
    expect((await ping(`/ping/${key}/last-one?create=1`)).status).toBe(200);
    const refused = await ping(`/ping/${key}/one-too-many?create=1`);
    expect([refused.status, await refused.text()]).toEqual([404, "not found"]);
    expect((await ping(`/${key}/one-too-many/start?create=1`)).status).toBe(404);
    expect(await server.services.checks.list("crowded")).toHaveLength(MOST_CHECKS_BY_PING);
    expect((await ping(`/ping/${key}/last-one?create=1`)).status).toBe(200);
    expect((await ping(`/ping/${key}/job-0/fail?create=1`)).status).toBe(200);
    await server.services.checks.create({ project: "crowded", name: "Chosen over the API" });
    expect(await server.services.checks.list("crowded")).toHaveLength(MOST_CHECKS_BY_PING + 1);
  });
});

describe("checks are made with their fields checked", () => {
  test("each bad field is a 400 naming it, and nothing is made", async () => {
    const before = (await server.services.checks.list("ops")).length;
    const taken = await check({ slug: "taken", uuid: crypto.randomUUID(), push_token: "t".repeat(32) });
    const cases: [Record<string, unknown>, string][] = [
      [{ slug: "Not OK" }, "slug"],
      [{ slug: "taken" }, "slug"],
      [{ period: 4 }, "period"],
      [{ period: undefined, cron: "not cron" }, "cron"],
      [{ period: undefined, cron: "0 3 * * *", tz: "Mars/Olympus" }, "tz"],
      [{ grace: -1 }, "grace"],
      [{ uuid: "123" }, "uuid"],
      [{ uuid: taken.uuid }, "uuid"],
      [{ push_token: "short" }, "push_token"],
      [{ push_token: taken.pushToken }, "push_token"],
      [{ channel: "Bad Channel" }, "channel"],
      [{ name: "" }, "name"],
    ];
    for (const [fields, path] of cases) {
      const error = await check(fields).then(
        () => null,
        (e) => e,
      );
      expect({ fields, status: error?.kind, path: error?.issues?.[0]?.path }).toEqual({
        fields,
        status: "invalid",
        path,
      });
    }
    expect((await server.services.checks.list("ops")).length).toBe(before + 1);
  });
});
