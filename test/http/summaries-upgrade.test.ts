// A database from before the summaries: the server that upgrades it builds them in the background
// and answers the same all along (from the events until they are built); an event that arrives
// meanwhile is counted once. Its search index, made before the index kept only which events hold a
// word, is made again. Runs on PostgreSQL too.
import { Database } from "bun:sqlite";
import { afterAll, describe, expect, test } from "bun:test";
import { SQL } from "bun";
import { join } from "node:path";
import pgJournal from "../../drizzle/pg/meta/_journal.json";
import journal from "../../drizzle/sqlite/meta/_journal.json";
import { MIGRATIONS as PG_MIGRATIONS } from "../../src/store/pg/migrate.ts";
import { MIGRATIONS } from "../../src/store/sqlite/migrate.ts";
import { createDatabase, dropDatabase } from "../pg-cluster.ts";
import {
  call,
  databaseFile,
  found,
  POSTGRES,
  post,
  startTestServer,
  tempDir,
  type TestServer,
  withDatabase,
} from "../helpers.ts";

const HOUR = 3_600_000;
const DAY = 86_400_000;
const NOW = Date.now();
const START = NOW - 20 * DAY;
/** The questions' end: after every event, the one posted during the test too. */
const END = Math.round((NOW + HOUR) / 1000);

/** 2,400 events over 20 days by 30 users in two channels, with a tag: as the previous version stored them. */
function rowsOfOldEvents(): string[] {
  const rows = [
    "INSERT INTO projects (id, name, created_at) VALUES (1, 'old', 0)",
    "INSERT INTO channels (id, project_id, name, created_at) VALUES (1, 1, 'app', 0), (2, 1, 'web', 0)",
  ];
  const events: string[] = [];
  const tags: string[] = [];
  for (let i = 1; i <= 2400; i++) {
    const ts = START + i * 12 * 60_000 + (i % 7) * 1000;
    const plan = ["free", "pro", "team"][i % 3];
    events.push(
      `(${i}, 1, ${1 + (i % 2)}, '${i % 4 ? "Viewed" : "Paid"}', 'u${i % 30}', '{"plan":"${plan}"}', ${ts}, ${ts})`,
    );
    tags.push(`(1, 'plan', '${plan}', ${ts}, ${i})`);
  }
  rows.push(
    `INSERT INTO events (id, project_id, channel_id, event, user_id, tags, ts, received_at) VALUES ${events.join(", ")}`,
  );
  rows.push(`INSERT INTO event_tags (project_id, key, value, ts, event_id) VALUES ${tags.join(", ")}`);
  return rows;
}

const questions = [
  `/v1/analytics/series?project=old&from=${Math.round(START / 1000)}&to=${END}`,
  `/v1/analytics/series?project=old&from=${Math.round(START / 1000)}&to=${END}&measure=users&group_by=tag:plan&interval=week`,
  `/v1/analytics/series?project=old&from=${Math.round(START / 1000)}&to=${END}&group_by=channel&interval=hour`,
  `/v1/analytics/retention?project=old&start_event=Viewed&return_event=Paid&from=${Math.round(START / 1000)}&to=${END}`,
];

async function answers(server: TestServer): Promise<unknown[]> {
  return Promise.all(questions.map(async (path) => (await call(server, { path })).json));
}

let running: TestServer | null = null;
afterAll(() => running?.close());

describe("a database from before the summaries", () => {
  async function upgraded(server: TestServer, ready: () => Promise<boolean>): Promise<void> {
    running = server;
    // Before they are built the events answer; meanwhile an event arrives, and is counted once.
    const before = await answers(server);
    const live = await post(server, "/v1/log", {
      project: "old",
      channel: "app",
      event: "Viewed",
      user_id: "u1",
      tags: { plan: "pro" },
    });
    expect(live.status).toBe(200);
    await found(async () => ((await ready()) ? true : null), 60_000);
    const after = await answers(server);
    expect((after[0] as { series: { total: number }[] }).series[0]!.total).toBe(2401);
    expect((before[0] as { series: { total: number }[] }).series[0]!.total).toBe(2400);
    // Built, they answer as the events do.
    const filter = { projectId: 1 };
    const store = server.store;
    const bounds = [START, START + 7 * DAY, START + 14 * DAY, NOW + HOUR];
    for (const q of [
      { measure: "events" as const, groupBy: null },
      { measure: "users" as const, groupBy: null },
      { measure: "users" as const, groupBy: { by: "tag" as const, key: "plan" } },
      { measure: "events" as const, groupBy: { by: "channel" as const } },
    ]) {
      const series = { filter, bounds, ...q, limit: 5 };
      expect(await store.analytics.series(series)).toEqual(await store.analytics.series({ ...series, raw: true }));
    }
    const retention = { filter, startEvent: "Viewed", returnEvent: "Paid", bounds, cohorts: 2, periods: 1 };
    expect(await store.analytics.retention(retention)).toEqual(
      await store.analytics.retention({ ...retention, raw: true }),
    );
  }

  test.skipIf(POSTGRES !== null)(
    "SQLite: built when the server starts; the search index is made again",
    async () => {
      const dataDir = tempDir();
      const db = new Database(databaseFile(dataDir), { create: true });
      db.exec("CREATE TABLE __migrations (tag TEXT PRIMARY KEY, applied_at INTEGER NOT NULL)");
      for (const { tag } of journal.entries.filter((e) => e.tag < "0014")) {
        for (const statement of MIGRATIONS[tag]!.split("--> statement-breakpoint"))
          if (statement.trim()) db.exec(statement);
        db.query("INSERT INTO __migrations (tag, applied_at) VALUES (?, 0)").run(tag);
      }
      for (const row of rowsOfOldEvents()) db.exec(row);
      db.close();
      // Its search index as the previous version made it: detail=full, every event in.
      withDatabase(
        join(dataDir, "search.db"),
        (search) => {
          search.exec(
            "CREATE VIRTUAL TABLE events_fts USING fts5(event, description, content='', contentless_delete=1, tokenize='unicode61 remove_diacritics 2')",
          );
          search.exec("CREATE TABLE search_state (key TEXT PRIMARY KEY, value TEXT NOT NULL)");
          search.exec(
            "INSERT INTO search_state (key, value) VALUES ('indexed_through', '2400'), ('deleted_through', '0')",
          );
        },
        { write: true },
      );
      const server = await startTestServer({}, dataDir);
      const built = () =>
        withDatabase(
          databaseFile(dataDir),
          (d) => d.query("SELECT count(*) AS n FROM summary_builds").get() as { n: number },
        );
      await upgraded(server, async () => built().n === 0);
      const made = withDatabase(
        join(dataDir, "search.db"),
        (d) => (d.query("SELECT sql FROM sqlite_master WHERE name = 'events_fts'").get() as { sql: string }).sql,
      );
      expect(made).toContain("detail=none");
      const searched = await found(async () => {
        const { json } = await call(server, { path: "/v1/events?project=old&q=viewed&limit=100" });
        return json.events?.length === 100 ? (json as { events: unknown[] }) : null;
      }, 30_000);
      expect(searched?.events).toHaveLength(100);
    },
    120_000,
  );

  test.skipIf(POSTGRES === null)(
    "PostgreSQL: built when the server starts",
    async () => {
      const url = await createDatabase(POSTGRES!);
      const sql = new SQL(url, { max: 1 });
      try {
        await sql`CREATE TABLE __migrations (tag text PRIMARY KEY, applied_at bigint NOT NULL)`;
        for (const { tag } of pgJournal.entries.filter((e) => e.tag < "0008")) {
          for (const statement of PG_MIGRATIONS[tag]!.split("--> statement-breakpoint"))
            if (statement.trim()) await sql.unsafe(statement);
          await sql`INSERT INTO __migrations (tag, applied_at) VALUES (${tag}, 0)`;
        }
        for (const row of rowsOfOldEvents()) await sql.unsafe(row);
        await sql`INSERT INTO event_ids (one, last_id) VALUES (true, 2400)`;
        await sql`SELECT setval(pg_get_serial_sequence('projects', 'id'), 1)`;
        await sql`SELECT setval(pg_get_serial_sequence('channels', 'id'), 2)`;
      } finally {
        await sql.close();
      }
      const server = await startTestServer({ "database-url": url });
      const check = new SQL(url, { max: 1 });
      try {
        await upgraded(
          server,
          async () => ((await check`SELECT count(*)::int AS n FROM summary_builds`) as { n: number }[])[0]!.n === 0,
        );
      } finally {
        await check.close();
        await server.close();
        running = null;
        await dropDatabase(POSTGRES!, url);
      }
    },
    120_000,
  );
});
