// The users search on its index (store/user-search.ts): profiles of the size a public token can
// write, users known only from events, profiles that change, pages of many matches, a deleted
// project, and a database from before the index. Runs on PostgreSQL too.
import { Database } from "bun:sqlite";
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { SQL } from "bun";
import pgJournal from "../../drizzle/pg/meta/_journal.json";
import journal from "../../drizzle/sqlite/meta/_journal.json";
import { MIGRATIONS as PG_MIGRATIONS } from "../../src/store/pg/migrate.ts";
import { MIGRATIONS } from "../../src/store/sqlite/migrate.ts";
import { createDatabase, dropDatabase } from "../pg-cluster.ts";
import {
  type Agent,
  databaseFile,
  POSTGRES,
  peek,
  post,
  searchIndexed,
  signedIn,
  startTestApp,
  tempDir,
  type TestApp,
  withDatabase,
} from "../helpers.ts";

const OWNER = { username: "owner", password: "correct horse battery staple" };

let server: TestApp;
let agent: Agent;

async function ok(res: Promise<{ status: number; json: unknown }>) {
  const r = await res;
  if (r.status !== 200) throw new Error(`answered ${r.status}: ${JSON.stringify(r.json)}`);
}

/** The user ids a search lists, every page of it (following "More users"), in order. */
async function search(project: string, q: string, as = agent): Promise<string[]> {
  const ids: string[] = [];
  let next: string | null = `/p/${project}/users?q=${encodeURIComponent(q)}`;
  while (next) {
    const res = await as.request(next);
    expect(res.status).toBe(200);
    const html = await res.text();
    ids.push(...[...html.matchAll(/<a class="user-id" href="[^"]+">([^<]*)<\/a>/g)].map((m) => m[1]!));
    next = /<li class="users-more"><a[^>]* href="([^"]+)"/.exec(html)?.[1]?.replace(/&amp;/g, "&") ?? null;
  }
  return ids;
}

// The review's profiles: 100 properties of 600 characters of words, the same words in every
// profile's first 99 properties; only the last (p99) says `needle` and its group.
let seed = 7;
const random = () => (seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff;
const vocabulary = Array.from({ length: 3000 }, () =>
  Array.from({ length: 3 + Math.floor(random() * 6) }, () => String.fromCharCode(97 + Math.floor(random() * 26))).join(
    "",
  ),
);
const filler = (length: number, start = "") => {
  let text = start;
  while (text.length < length) text += (text ? " " : "") + vocabulary[Math.floor(random() * vocabulary.length)];
  return text.slice(0, length);
};
const group = (i: number) => `grp${String(i % 100).padStart(3, "0")}`;
function bigProfile(i: number): Record<string, string> {
  const properties: Record<string, string> = {};
  for (let k = 0; k < 99; k++) properties[`p${String(k).padStart(2, "0")}`] = filler(600);
  properties.p99 = filler(600, `needle ${group(i)}`);
  return properties;
}

beforeAll(async () => {
  // The review wrote its profiles with a public token; its rate limit is not what is tested here.
  server = await startTestApp({ "rate-limit-public": "0" });
  await server.services.accounts.createUser(OWNER, "owner");
  agent = await signedIn(server, OWNER);
  for (const name of ["big", "life", "crowd", "gone"]) await server.services.projects.create(name);
});
afterAll(() => server.close());

describe("the users search", () => {
  test("1,500 profiles of 100 properties of 600 characters: words only the last property holds find exactly their users", async () => {
    const { token } = await server.services.tokens.create({ name: "site", kind: "public", project: "big" });
    const users = 1500;
    for (let i = 0; i < users; i += 25) {
      await Promise.all(
        Array.from({ length: Math.min(25, users - i) }, (_, j) =>
          ok(
            post(
              server,
              "/v1/identify",
              { project: "big", user_id: `u${i + j}`, properties: bigProfile(i + j) },
              token,
            ),
          ),
        ),
      );
    }
    await searchIndexed(server, 120_000);
    const group7 = Array.from({ length: users }, (_, i) => i)
      .filter((i) => i % 100 === 7)
      .map((i) => `u${i}`);
    const sorted = (ids: string[]) => [...ids].sort();
    expect(sorted(await search("big", "needle grp007"))).toEqual(sorted(group7));
    expect(sorted(await search("big", "p99:grp007"))).toEqual(sorted(group7));
    expect(sorted(await search("big", "p99:needle p99:grp00"))).toHaveLength(150); // grp000 to grp009, the last word as a prefix
    // The words are the last property's only.
    expect(await search("big", "p98:grp007")).toEqual([]);
    expect(await search("big", "p00:needle")).toEqual([]);
    expect(await search("big", "needle grp007 nosuchword")).toEqual([]);
  });

  test("a user known only from events is found by their id", async () => {
    await ok(
      post(server, "/v1/log", { project: "life", channel: "app", event: "Signed in", user_id: "evt-only-7f3a" }),
    );
    await ok(
      post(server, "/v1/log", {
        project: "life",
        channel: "app",
        event: "Signed in",
        user_id: "someone.else@example.com",
      }),
    );
    await searchIndexed(server);
    expect(await search("life", "evt-only-7f3a")).toEqual(["evt-only-7f3a"]);
    expect(await search("life", "7f3a")).toEqual(["evt-only-7f3a"]);
    expect(await search("life", "someone example")).toEqual(["someone.else@example.com"]);
    // A property term matches only someone identified.
    expect(await search("life", "email:someone")).toEqual([]);
  });

  test("identify that changes a property: the old word no longer matches, the new one does; a removed property matches nothing", async () => {
    await ok(
      post(server, "/v1/identify", {
        project: "life",
        user_id: "chameleon",
        properties: { color: "crimson red", size: 3 },
      }),
    );
    await searchIndexed(server);
    expect(await search("life", "crimson")).toEqual(["chameleon"]);
    expect(await search("life", "color:crimson")).toEqual(["chameleon"]);
    await ok(post(server, "/v1/identify", { project: "life", user_id: "chameleon", properties: { color: "teal" } }));
    await searchIndexed(server);
    expect(await search("life", "crimson")).toEqual([]);
    expect(await search("life", "teal")).toEqual(["chameleon"]);
    expect(await search("life", "color:teal size:3")).toEqual(["chameleon"]);
    // Merged, not replaced: the property it did not send is still there.
    expect(await search("life", "size:3")).toEqual(["chameleon"]);
    await ok(post(server, "/v1/identify", { project: "life", user_id: "chameleon", properties: { color: null } }));
    await searchIndexed(server);
    expect(await search("life", "teal")).toEqual([]);
    expect(await search("life", 'color:""')).toEqual([]);
    expect(await search("life", 'size:""')).toEqual(["chameleon"]);
    // The id still finds them.
    expect(await search("life", "chameleon")).toEqual(["chameleon"]);
  });

  test("key:value looks in that property's value only; a plain word in any key or value", async () => {
    await ok(
      post(server, "/v1/identify", {
        project: "life",
        user_id: "kv-1",
        properties: { favourite_city: "Paris", home: "Lyon" },
      }),
    );
    await ok(
      post(server, "/v1/identify", {
        project: "life",
        user_id: "kv-2",
        properties: { home: "Paris", "first name": "Zoé" },
      }),
    );
    await searchIndexed(server);
    expect((await search("life", "paris")).sort()).toEqual(["kv-1", "kv-2"]);
    expect(await search("life", "home:paris")).toEqual(["kv-2"]);
    expect(await search("life", "home:lyon")).toEqual(["kv-1"]);
    expect(await search("life", "favourite")).toEqual(["kv-1"]); // a key's word
    expect(await search("life", "favourite_city:favourite")).toEqual([]); // a key's words are not its value's
    expect(await search("life", "zoe home:paris")).toEqual(["kv-2"]);
  });

  test("pages through many matches (more than are ordered at once) and through a few, none twice, none missed, newest first", async () => {
    const users = 2500;
    const now = Math.floor(Date.now() / 1000);
    for (let i = 0; i < users; i += 50) {
      await Promise.all(
        Array.from({ length: Math.min(50, users - i) }, (_, j) => {
          const n = i + j;
          // Newest first is crowd-0000 first; the last 100 share one moment (ties across pages).
          const secondsAgo = n < 2400 ? 100 + n : 100 + 2400;
          return ok(
            post(server, "/v1/log", {
              project: "crowd",
              channel: "app",
              event: "Visited",
              user_id: `crowd-${String(n).padStart(4, "0")}`,
              timestamp: now - secondsAgo,
            }),
          );
        }),
      );
    }
    await searchIndexed(server);
    const id = (n: number) => `crowd-${String(n).padStart(4, "0")}`;
    const expected = [
      ...Array.from({ length: 2400 }, (_, n) => id(n)),
      ...Array.from({ length: 100 }, (_, k) => id(2499 - k)),
    ];
    expect(await search("crowd", "crowd")).toEqual(expected);
    expect(await search("crowd", "crowd-00")).toEqual(expected.filter((u) => u.startsWith("crowd-00")));
    expect(await search("crowd", "crowd-24")).toEqual(expected.filter((u) => u.startsWith("crowd-24")));
  });

  test("a deleted project's users leave the index", async () => {
    const project = (await server.services.projects.create("gone-soon"))!;
    await ok(post(server, "/v1/identify", { project: "gone-soon", user_id: "leaver", properties: { plan: "pro" } }));
    await ok(post(server, "/v1/log", { project: "gone-soon", channel: "app", event: "Left", user_id: "event-leaver" }));
    await searchIndexed(server);
    expect((await search("gone-soon", "leaver")).sort()).toEqual(["event-leaver", "leaver"]);
    await server.services.projects.deleteProject("gone-soon");
    await searchIndexed(server);
    const left =
      "sqlite" in server.store
        ? withDatabase(
            join(server.dataDir, "search.db"),
            (db) =>
              db
                .query<{ n: number }, [number]>("SELECT count(*) AS n FROM user_docs WHERE project_id = ?")
                .get(project.id)!.n,
          )
        : Number(
            (
              await peek<{ n: number }>(
                server,
                "SELECT count(*) AS n FROM user_search WHERE project_id = ?",
                project.id,
              )
            )[0]!.n,
          );
    expect(left).toBe(0);
    await server.services.projects.create("gone-soon");
    expect(await search("gone-soon", "leaver")).toEqual([]);
    // The same user id in the new project is a new user, and found again.
    await ok(
      post(server, "/v1/log", { project: "gone-soon", channel: "app", event: "Came back", user_id: "event-leaver" }),
    );
    await searchIndexed(server);
    expect(await search("gone-soon", "leaver")).toEqual(["event-leaver"]);
  });
});

describe("a database from before the index", () => {
  // As the previous version left it: its migrations, a profile, and a user known from events only.
  const rows = [
    "INSERT INTO projects (id, name, created_at) VALUES (1, 'old', 0)",
    "INSERT INTO channels (id, project_id, name, created_at) VALUES (1, 1, 'app', 0)",
    `INSERT INTO profiles (project_id, user_id, properties, created_at, updated_at) VALUES (1, 'ann', '{"email":"ann@example.com","plan":"pro"}', 1000, 1000)`,
    "INSERT INTO events (id, project_id, channel_id, event, user_id, ts, received_at) VALUES (1, 1, 1, 'Signed in', 'legacy-42', 2000, 2000)",
  ];

  async function searchesOld(running: TestApp): Promise<void> {
    await running.services.accounts.createUser(OWNER, "owner");
    const owner = await signedIn(running, OWNER);
    await searchIndexed(running);
    expect(await search("old", "plan:pro", owner)).toEqual(["ann"]);
    expect(await search("old", "example", owner)).toEqual(["ann"]);
    expect(await search("old", "legacy-42", owner)).toEqual(["legacy-42"]);
  }

  test.skipIf(POSTGRES !== null)(
    "SQLite: its profiles and its events' users are indexed when the server starts",
    async () => {
      const dataDir = tempDir();
      const db = new Database(databaseFile(dataDir), { create: true });
      db.exec("CREATE TABLE __migrations (tag TEXT PRIMARY KEY, applied_at INTEGER NOT NULL)");
      for (const { tag } of journal.entries.filter((e) => e.tag < "0009")) {
        for (const statement of MIGRATIONS[tag]!.split("--> statement-breakpoint"))
          if (statement.trim()) db.exec(statement);
        db.query("INSERT INTO __migrations (tag, applied_at) VALUES (?, 0)").run(tag);
      }
      for (const row of rows) db.exec(row);
      db.close();
      // Its search.db had indexed the event already: only the first run of the users index finds legacy-42.
      withDatabase(
        join(dataDir, "search.db"),
        (search) => {
          search.exec("CREATE TABLE search_state (key TEXT PRIMARY KEY, value TEXT NOT NULL)");
          search.exec(
            "INSERT INTO search_state (key, value) VALUES ('indexed_through', '1'), ('deleted_through', '0')",
          );
        },
        { write: true },
      );
      const running = await startTestApp({}, dataDir);
      try {
        await searchesOld(running);
      } finally {
        await running.close();
      }
    },
  );

  test.skipIf(POSTGRES === null)(
    "PostgreSQL: its profiles and its events' users are indexed by the migration",
    async () => {
      const url = await createDatabase(POSTGRES!);
      const sql = new SQL(url, { max: 1 });
      try {
        await sql`CREATE TABLE __migrations (tag text PRIMARY KEY, applied_at bigint NOT NULL)`;
        for (const { tag } of pgJournal.entries.filter((e) => e.tag < "0002")) {
          for (const statement of PG_MIGRATIONS[tag]!.split("--> statement-breakpoint"))
            if (statement.trim()) await sql.unsafe(statement);
          await sql`INSERT INTO __migrations (tag, applied_at) VALUES (${tag}, 0)`;
        }
        for (const row of rows) await sql.unsafe(row);
        await sql`INSERT INTO event_ids (one, last_id) VALUES (true, 1)`;
        await sql`SELECT setval(pg_get_serial_sequence('projects', 'id'), 1)`;
        await sql`SELECT setval(pg_get_serial_sequence('channels', 'id'), 1)`;
      } finally {
        await sql.close();
      }
      const running = await startTestApp({ "database-url": url });
      try {
        await searchesOld(running);
      } finally {
        await running.close();
        await dropDatabase(POSTGRES!, url);
      }
    },
  );
});
