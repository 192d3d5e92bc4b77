// The number of events a search matches, above its results: counted exactly up to 10,000 (through
// the read path, kind "count"), and "more than 10,000" beyond; not the first page's 40 with a "+".
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { newEvent } from "../../src/domain/ingest.ts";
import { SEARCH_COUNT_CAP } from "../../src/domain/feed.ts";
import { GATED_READS } from "../../src/store/reads.ts";
import { type Agent, post, searchIndexed, signedIn, startTestApp, type TestApp } from "../helpers.ts";

let server: TestApp;
let agent: Agent;

const OWNER = { username: "owner", password: "correct horse battery" };

/** `count` events in channel `channel` of the default project, straight through the store (fast enough for 10k). */
async function bulk(channel: string, count: number): Promise<void> {
  const store = server.store;
  const p = (await store.projects.findByName("default"))!;
  if ("sql" in store) {
    // PostgreSQL: one statement (a round trip per event would take long), ids from the counter as the writer hands them out.
    const { id } = await store.tx((tx) => tx.projects.ensureChannel(p.id, channel, Date.now()));
    await store.sql.begin(async (tx) => {
      const [{ last_id }] = (await tx`SELECT last_id FROM event_ids FOR UPDATE`) as [{ last_id: string }];
      const first = Number(last_id);
      await tx`INSERT INTO events (id, project_id, channel_id, event, description, ts, received_at, search_text)
               SELECT ${first} + g, ${p.id}, ${id}, 'bulk ' || g, '', ${Date.now()} - g, ${Date.now()}, 'bulk ' || g FROM generate_series(1, ${count}) g`;
      await tx`UPDATE event_ids SET last_id = ${first + count}`;
    });
    return;
  }
  await store.tx(async (tx) => {
    const { id } = await tx.projects.ensureChannel(p.id, channel, Date.now());
    for (let i = 0; i < count; i++)
      await tx.events.insert(newEvent(p, id, { project: "default", channel, event: `bulk ${i}` }, Date.now() - i));
  });
}

/** What the page says above a search's results. */
async function summary(path: string): Promise<string> {
  const res = await agent.request(path);
  expect(res.status).toBe(200);
  const page = await res.text();
  const found = /<p class="result-count" role="status">([^<]*)<\/p>/.exec(page);
  if (!found) throw new Error(`no result count on ${path}`);
  return found[1]!;
}

beforeAll(async () => {
  server = await startTestApp();
  await server.services.accounts.createUser(OWNER, "owner");
  agent = await signedIn(server, OWNER);
  const sent = [
    ...Array.from({ length: 132 }, (_, i) => ({ channel: "orders", event: `Order ${i}`, tags: { plan: "pro" } })),
    ...Array.from({ length: 8 }, (_, i) => ({ channel: "orders", event: `Order free ${i}`, tags: { plan: "free" } })),
    ...Array.from({ length: 45 }, (_, i) => ({
      channel: "support",
      event: `Ticket ${i}`,
      description: "refund asked",
    })),
    { channel: "support", event: "Ticket solo", description: "one of a kind" },
  ];
  for (let i = 0; i < sent.length; i += 25)
    for (const res of await Promise.all(
      sent.slice(i, i + 25).map((e) => post(server, "/v1/log", { project: "default", ...e })),
    ))
      expect(res.status).toBe(200);
  await bulk("bulk", SEARCH_COUNT_CAP + 50);
  await searchIndexed(server, 60_000);
});
afterAll(() => server.close());

describe("a search's count", () => {
  test("is exact past the first page: by tag, channel, words (alone and with a tag), and on a channel's page", async () => {
    expect(await summary("/p/default?q=plan:pro")).toBe("132 events match");
    expect(await summary("/p/default?channel=orders")).toBe("140 events match");
    expect(await summary("/p/default?q=refund")).toBe("45 events match");
    expect(await summary("/p/default?q=order+plan:pro")).toBe("132 events match");
    expect(await summary("/p/default/c/support?q=refund")).toBe("45 events match");
    expect(await summary("/p/default/c/orders?q=refund")).toBe("No events match");
    expect(await summary("/p/default/c/orders?q=plan:free")).toBe("8 events match");
    expect(await summary("/p/default?q=kind")).toBe("1 event matches");
    expect(await summary("/p/default?q=plan:pro&user=nobody")).toBe("No events match");
  });

  test(`says "more than ${SEARCH_COUNT_CAP.toLocaleString("en-US")}" beyond what it counts`, async () => {
    expect(await summary("/p/default?channel=bulk")).toBe("More than 10,000 events match");
    // Exactly at the cap is still a number.
    expect(await server.services.feed.countEvents({ project: "default", channel: "bulk" }, SEARCH_COUNT_CAP)).toBe(
      SEARCH_COUNT_CAP + 1,
    );
    expect(await server.services.feed.countEvents({ project: "default", channel: "orders" }, 140)).toBe(140);
    expect(await server.services.feed.countEvents({ project: "default", channel: "orders" }, 139)).toBe(140);
  });

  test("goes through the read path, as a read of kind count (a reader on SQLite, the read pool on PostgreSQL)", () => {
    expect(GATED_READS.events?.count).toBe("count");
  });
});
