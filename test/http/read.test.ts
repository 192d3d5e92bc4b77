// The read API: newest first by event time, keyset pagination, filters, full-text search.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openSqliteStore } from "../../src/store/sqlite/index.ts";
import { openIndexerConnection, prepareSearch, searchIndexer } from "../../src/store/sqlite/search.ts";
import { call, eventually, onPostgres, post, startTestApp, type TestApp, withDatabase } from "../helpers.ts";

let server: TestApp;
const now = Math.floor(Date.now() / 1000);

beforeAll(async () => {
  server = await startTestApp();
  await server.services.projects.create("shop");
  const events = [
    {
      channel: "orders",
      event: "Order placed",
      description: "Blue kettle, two units",
      tags: { plan: "pro", amount: 40 },
      user_id: "alice",
    },
    {
      channel: "orders",
      event: "Order placed",
      description: "Red toaster",
      tags: { plan: "free", amount: 25 },
      user_id: "bob",
    },
    {
      channel: "orders",
      event: "Refund issued",
      description: "Kettle returned",
      tags: { plan: "pro", vip: true },
      user_id: "alice",
    },
    {
      channel: "signups",
      event: "New signup",
      description: "Came from the newsletter",
      tags: { plan: "pro", source: "newsletter" },
      user_id: "carol",
    },
    {
      channel: "signups",
      event: "New signup",
      description: "Organic visit",
      tags: { plan: "free", source: "organic" },
      user_id: "dave",
    },
  ];
  for (const e of events) expect((await post(server, "/v1/log", { project: "shop", ...e })).status).toBe(200);
});
afterAll(() => server.close());

const names = (res: { json: { events: { event: string; description: string }[] } }) =>
  res.json.events.map((e) => e.description);

describe("GET /v1/events", () => {
  test("lists newest first", async () => {
    const res = await call(server, { path: "/v1/events?project=shop" });
    expect(res.status).toBe(200);
    expect(names(res)).toEqual([
      "Organic visit",
      "Came from the newsletter",
      "Kettle returned",
      "Red toaster",
      "Blue kettle, two units",
    ]);
  });

  test("a tag filter's value is everything after the first colon, as stored: quotes, colons and the empty value", async () => {
    await server.services.projects.create("notes");
    for (const note of ['say "hi"', "a:b", "", '"quoted"'])
      expect(
        (
          await post(server, "/v1/log", {
            project: "notes",
            channel: "n",
            event: "Note",
            description: JSON.stringify(note),
            tags: { note },
          })
        ).status,
      ).toBe(200);
    for (const note of ['say "hi"', "a:b", "", '"quoted"']) {
      expect(
        names(await call(server, { path: `/v1/events?project=notes&tag=${encodeURIComponent(`note:${note}`)}` })),
      ).toEqual([JSON.stringify(note)]);
    }
  });

  test("filters by channel and by user", async () => {
    expect(names(await call(server, { path: "/v1/events?project=shop&channel=signups" }))).toEqual([
      "Organic visit",
      "Came from the newsletter",
    ]);
    expect(names(await call(server, { path: "/v1/events?project=shop&user_id=alice" }))).toEqual([
      "Kettle returned",
      "Blue kettle, two units",
    ]);
  });

  test("filters by tags; every tag must match; numbers and booleans match their text", async () => {
    expect(names(await call(server, { path: "/v1/events?project=shop&tag=plan:pro" }))).toEqual([
      "Came from the newsletter",
      "Kettle returned",
      "Blue kettle, two units",
    ]);
    expect(names(await call(server, { path: "/v1/events?project=shop&tag=plan:pro&tag=source:newsletter" }))).toEqual([
      "Came from the newsletter",
    ]);
    expect(names(await call(server, { path: "/v1/events?project=shop&tag=amount:25" }))).toEqual(["Red toaster"]);
    expect(names(await call(server, { path: "/v1/events?project=shop&tag=vip:true" }))).toEqual(["Kettle returned"]);
    // A key no event can have (keys are lowercase) is a mistake to point out, not an empty list.
    const upper = await call(server, { path: "/v1/events?project=shop&tag=Plan:pro" });
    expect(upper.status).toBe(400);
    expect(upper.json.error).toBe("invalid_tag_filter");
    const unknown = await call(server, { path: "/v1/events?project=nope" });
    expect(unknown.status).toBe(404);
    expect(unknown.json.message).toContain("signalboard project create nope");
    expect(names(await call(server, { path: "/v1/events?project=shop&channel=orders&tag=plan:pro" }))).toEqual([
      "Kettle returned",
      "Blue kettle, two units",
    ]);
  });

  test("full-text search over name and description, by word prefix, within a second", async () => {
    // Events reach the index in steps, so each search waits (up to a second) for what it expects.
    await eventually(async () =>
      expect(names(await call(server, { path: "/v1/events?project=shop&q=kettle" }))).toEqual([
        "Kettle returned",
        "Blue kettle, two units",
      ]),
    );
    await eventually(async () =>
      expect(names(await call(server, { path: "/v1/events?project=shop&q=news" }))).toEqual([
        "Came from the newsletter",
      ]),
    );
    await eventually(async () =>
      expect(names(await call(server, { path: "/v1/events?project=shop&q=signup%20organic" }))).toEqual([
        "Organic visit",
      ]),
    );
    expect(
      names(await call(server, { path: `/v1/events?project=shop&q=${encodeURIComponent('kettle")*(:^')}` })),
    ).toEqual(["Kettle returned", "Blue kettle, two units"]);
  });

  test.skipIf(onPostgres)(
    "deleted events leave the full-text index (search.db), so the index does not outgrow the events",
    async () => {
      await server.services.projects.create("zoo");
      await post(server, "/v1/log", { project: "zoo", channel: "animals", event: "Zebra crossing" });
      await eventually(async () =>
        expect((await call(server, { path: "/v1/events?project=zoo&q=zebra" })).json.events).toHaveLength(1),
      );
      const indexed = () =>
        withDatabase(
          join(server.dataDir, "search.db"),
          (index) =>
            index.query<{ n: number }, []>("SELECT count(*) AS n FROM events_fts WHERE events_fts MATCH 'zebra'").get()!
              .n,
        );
      expect(indexed()).toBe(1);
      await server.services.projects.deleteProject("zoo");
      await eventually(() => expect(indexed()).toBe(0), 30_000);
    },
  );

  test.skipIf(onPostgres)(
    "the search index lives in search.db beside the database, and is rebuilt when it belongs to another one (a restore)",
    async () => {
      const dataDir = mkdtempSync(join(tmpdir(), "signalboard-search-"));
      const path = join(dataDir, "signalboard.db");
      let store = openSqliteStore(path);
      try {
        const { id: projectId } = (await store.projects.create("p", Date.now()))!;
        const channel = await store.projects.ensureChannel(projectId, "c", Date.now());
        const now = Date.now();
        for (const name of ["Wombat seen", "Kettle on"])
          await store.events.insert({
            projectId,
            project: "p",
            channelId: channel.id,
            channel: "c",
            name,
            description: null,
            icon: null,
            notify: false,
            parser: "text",
            userId: null,
            tags: null,
            ts: now,
            receivedAt: now,
            historical: false,
          });
        prepareSearch(store.sqlite, path);
        expect(existsSync(join(dataDir, "search.db"))).toBe(true);
        const indexer = openIndexerConnection(path);
        expect(searchIndexer(indexer).indexPending(100)).toBe(2);
        const matches = async () =>
          (await store.events.list({ projectId, terms: ["wombat"], limit: 10 })).map((e) => e.name);
        expect(await matches()).toEqual(["Wombat seen"]);
        // As if search.db came from another installation: it is emptied, then filled from these events.
        indexer.query("UPDATE search_state SET value = 'another' WHERE key = 'lineage'").run();
        indexer.close();
        await store.close();
        store = openSqliteStore(path);
        prepareSearch(store.sqlite, path);
        expect(await matches()).toEqual([]);
        const again = openIndexerConnection(path);
        expect(searchIndexer(again).indexPending(100)).toBe(2);
        again.close();
        expect(await matches()).toEqual(["Wombat seen"]);
      } finally {
        await store.close();
      }
    },
  );

  test("pages with an opaque cursor and never repeats or skips", async () => {
    const seen: string[] = [];
    let path = "/v1/events?project=shop&limit=2";
    for (;;) {
      const res = await call(server, { path });
      expect(res.json.events.length).toBeLessThanOrEqual(2);
      seen.push(...names(res));
      if (!res.json.next_cursor) break;
      path = `/v1/events?project=shop&limit=2&cursor=${res.json.next_cursor}`;
    }
    expect(seen).toEqual([
      "Organic visit",
      "Came from the newsletter",
      "Kettle returned",
      "Red toaster",
      "Blue kettle, two units",
    ]);
  });

  test("rejects bad query values with 400 and the field", async () => {
    for (const [query, field] of [
      ["limit=500", "limit"],
      ["limit=abc", "limit"],
      ["project=Shop", "project"],
      ["from=yesterday", "from"],
    ]) {
      const res = await call(server, { path: `/v1/events?${query}` });
      expect(res.status).toBe(400);
      expect(res.json.validation.query.map((i: { path: string }) => i.path)).toContain(field);
    }
    const cursor = await call(server, { path: "/v1/events?project=shop&cursor=garbage" });
    expect(cursor.status).toBe(400);
    expect(cursor.json.error).toBe("invalid_cursor");
    expect((await call(server, { path: "/v1/events?project=shop&tag=nocolon" })).status).toBe(400);
    expect((await call(server, { path: "/v1/events?project=nope" })).status).toBe(404);
    expect((await call(server, { path: "/v1/events?project=shop&channel=nope" })).status).toBe(404);
  });
});

describe("historical events", () => {
  test("slot in by event time, not arrival", async () => {
    await server.services.projects.create("history");
    await post(server, "/v1/log", { project: "history", channel: "c", event: "now" });
    await post(server, "/v1/log", {
      project: "history",
      channel: "c",
      event: "two days ago",
      timestamp: now - 2 * 86400,
    });
    await post(server, "/v1/log", { project: "history", channel: "c", event: "one day ago", timestamp: now - 86400 });
    const res = await call(server, { path: "/v1/events?project=history" });
    expect(res.json.events.map((e: { event: string }) => e.event)).toEqual(["now", "one day ago", "two days ago"]);
    expect(res.json.events[1].historical).toBe(true);
    expect(res.json.events[1].timestamp).toBe(now - 86400);
  });

  test("time range filters by event time", async () => {
    const from = new Date((now - 1.5 * 86400) * 1000).toISOString();
    const res = await call(server, { path: `/v1/events?project=history&from=${from}&to=${now - 3600}` });
    expect(res.json.events.map((e: { event: string }) => e.event)).toEqual(["one day ago"]);
  });
});

describe("GET /v1/metrics", () => {
  test("lists the project's metrics with their current values", async () => {
    await post(server, "/v1/insight", { project: "shop", title: "Revenue", value: 120, icon: "💰" });
    const res = await call(server, { path: "/v1/metrics?project=shop" });
    expect(res.json.metrics).toEqual([
      { project: "shop", title: "Revenue", value: 120, icon: "💰", updated_at: expect.any(Number) },
    ]);
  });
});
