// How a batch of events is written and ordered on PostgreSQL, measured at the SQL level without
// HTTP: W writers (a connection each, as W instances would) write batches of B events in a loop,
// each way in turn, in alternating rounds. PostgreSQL's CPU time per event is read from /proc.
//   bun test/bench/pg-order.ts [writers=1,2,3] [batch=32] [seconds=3] [rounds=2]
import { SQL } from "bun";
import { newEvent } from "../../src/domain/ingest-writes.ts";
import type { StoredEvent } from "../../src/model/event.ts";
import type { Project } from "../../src/model/project.ts";
import { searchText, writeEvents } from "../../src/store/pg/events.ts";
import { openPgStore } from "../../src/store/pg/index.ts";
import { WalOnDisk } from "../../src/store/pg/wal.ts";
import { createDatabase, startCluster } from "../pg-cluster.ts";
import { EVENT } from "./ingest.ts";
import { median, pgCpu } from "./lib.ts";

const [writersArg = "1,2,3", batchArg = "32", secondsArg = "3", roundsArg = "2"] = process.argv.slice(2);
const WRITERS = writersArg.split(",").map(Number);
const BATCH = Number(batchArg);
const SECONDS = Number(secondsArg);
const ROUNDS = Number(roundsArg);

const COLS =
  "project_id, channel_id, event, description, icon, notify, parser, user_id, tags, ts, received_at, historical, search_text";
const lit = (s: string) => `'${s.replace(/'/g, "''")}'`;
/** The columns after the id, from a record `r` (the bench event's constant fields written in). */
const REST = `r.p, r.ch, ${lit(EVENT.event)}, ${lit(EVENT.description)}, ${lit(EVENT.icon)}, false, 'text', null, r.tags, r.ts, r.ts, false, r.st`;
const tagRows = (rows: StoredEvent[]) =>
  rows.flatMap((r, i) =>
    Object.entries(EVENT.tags).map(([k, v]) => ({ i, p: r.projectId, k, v: String(v), ts: r.ts })),
  );
const plain = (rows: StoredEvent[]) =>
  rows.map((r, i) => ({
    i,
    p: r.projectId,
    ch: r.channelId,
    ts: r.ts,
    tags: JSON.stringify(r.tags),
    st: searchText(r.name, r.description),
  }));

type Way = (sql: SQL, rows: StoredEvent[], wal: WalOnDisk) => Promise<number>; // µs the order was held, when known

const WAYS: Record<string, Way> = {
  // As before: the order (the counter's row lock) taken first, a round trip per event.
  async "order first, a statement per event"(sql, rows) {
    await sql.begin(async (tx) => {
      const [{ last_id }] = await tx`SELECT last_id FROM event_ids FOR UPDATE`;
      let next = Number(last_id);
      for (const r of plain(rows)) {
        const tags = JSON.stringify(Object.entries(EVENT.tags).map(([key, value]) => ({ key, value: String(value) })));
        await tx.unsafe(
          `WITH event AS (INSERT INTO events (id, ${COLS}) SELECT $1, ${REST} FROM (SELECT $2::int p, $3::int ch, $4::bigint ts, $5::text tags, $6::text st) r RETURNING id)
           INSERT INTO event_tags (project_id, key, value, ts, event_id) SELECT $2, t.key, t.value, $4, event.id FROM event, jsonb_to_recordset($7::text::jsonb) t(key text, value text)`,
          [++next, r.p, r.ch, r.ts, r.tags, r.st, tags],
        );
      }
      await tx`UPDATE event_ids SET last_id = ${next}`;
      await tx`SELECT pg_notify('bench', ${String(next)})`;
    });
    return NaN;
  },
  // The order taken first, the batch in one statement (JSON rows).
  async "order first, one statement"(sql, rows) {
    await sql.begin(async (tx) => {
      const [{ last_id }] = await tx`SELECT last_id FROM event_ids FOR UPDATE`;
      const base = Number(last_id);
      await tx.unsafe(
        `WITH e AS (INSERT INTO events (id, ${COLS}) SELECT ${base} + r.i + 1, ${REST} FROM jsonb_to_recordset($1::text::jsonb) r(i int, p int, ch int, ts bigint, tags text, st text))
         INSERT INTO event_tags (project_id, key, value, ts, event_id) SELECT t.p, t.k, t.v, t.ts, ${base} + t.i + 1 FROM jsonb_to_recordset($2::text::jsonb) t(i int, p int, k text, v text, ts bigint)`,
        [JSON.stringify(plain(rows)), JSON.stringify(tagRows(rows))],
      );
      await tx`UPDATE event_ids SET last_id = ${base + rows.length}`;
      await tx`SELECT pg_notify('bench', ${String(base + rows.length)})`;
    });
    return NaN;
  },
  // write_events in a transaction of its own, committed as usual: the order is held from the
  // counter update through the commit's disk flush.
  async "one statement, ordered at its end, commit waits for the disk"(sql, rows) {
    await writeEvents(sql, rows, "bench", false);
    return NaN;
  },
  // write_events as the server calls it: committed without waiting for the disk, acknowledged once
  // the WAL is on disk (one check shared by the batches waiting for it).
  async "one statement, ordered at its end, acknowledged once on disk"(sql, rows, wal) {
    const written = await writeEvents(sql, rows, "bench", true);
    await wal.wait(written.wal!);
    return written.heldUs;
  },
  // No order at all: ids from a sequence and each row's transaction id, as an outbox tailer reads
  // them (below pg_snapshot_xmin). Ids are then not in commit order: a reader of `id > last` skips.
  async "no order: sequence ids, transaction id per row"(sql, rows) {
    await sql.unsafe(
      `WITH e AS (INSERT INTO events_x (id, xid, ${COLS}) SELECT nextval('events_x_id'), pg_current_xact_id(), ${REST}
                    FROM jsonb_to_recordset($1::text::jsonb) r(i int, p int, ch int, ts bigint, tags text, st text) ORDER BY r.i RETURNING id, project_id, ts),
            n AS (SELECT e.*, row_number() OVER (ORDER BY id) - 1 AS i FROM e)
       INSERT INTO event_tags_x (project_id, key, value, ts, event_id) SELECT n.project_id, t.k, t.v, n.ts, n.id FROM n JOIN jsonb_to_recordset($2::text::jsonb) t(i int, k text, v text) ON t.i = n.i`,
      [JSON.stringify(plain(rows)), JSON.stringify(tagRows(rows).map(({ i, k, v }) => ({ i, k, v })))],
    );
    return NaN;
  },
};

const cluster = await startCluster();
try {
  const url = await createDatabase(cluster.url, "order");
  await (await openPgStore(url)).close(); // the schema
  const admin = new SQL(url, { max: 1 });
  const [project] =
    (await admin`INSERT INTO projects (name, created_at) VALUES ('default', 0) RETURNING id, name, retention_days AS "retentionDays", created_at AS "createdAt"`) as [
      Project,
    ];
  const [{ id: channelId }] =
    await admin`INSERT INTO channels (project_id, name, created_at) VALUES (${project.id}, 'deploys', 0) RETURNING id`;
  await admin.unsafe(`CREATE TABLE events_x (LIKE events INCLUDING ALL); ALTER TABLE events_x ADD COLUMN xid xid8 NOT NULL; CREATE SEQUENCE events_x_id;
    CREATE INDEX ON events_x (xid); CREATE TABLE event_tags_x (LIKE event_tags INCLUDING ALL)`);
  const port = Number(new URL(url).port);
  const results: Record<string, { rate: number[]; pgUs: number[]; heldUs: number[] }> = {};
  let written = 0;
  for (let round = 0; round < ROUNDS; round++) {
    for (const writers of WRITERS) {
      for (const [name, way] of Object.entries(WAYS)) {
        const clients = Array.from({ length: writers }, () => new SQL(url, { max: 2 }));
        await Promise.all(clients.map((c) => c`SELECT 1`));
        const wal = clients.map((c) => new WalOnDisk(c));
        let events = 0;
        let held = 0;
        const cpu = pgCpu(port);
        const started = performance.now();
        const end = started + SECONDS * 1000;
        await Promise.all(
          clients.map(async (c, w) => {
            while (performance.now() < end) {
              const rows = Array.from(
                { length: BATCH },
                () => newEvent(project, channelId, EVENT, Date.now()) as StoredEvent,
              );
              held += await way(c, rows, wal[w]!);
              events += BATCH;
            }
          }),
        );
        const elapsed = (performance.now() - started) / 1000;
        written += events;
        const pgUs = (cpu() * 1e6) / events;
        await Promise.all(clients.map((c) => c.close()));
        const key = `${name}|${writers}`;
        results[key] ??= { rate: [], pgUs: [], heldUs: [] };
        results[key].rate.push(events / elapsed);
        results[key].pgUs.push(pgUs);
        results[key].heldUs.push(held / events);
      }
    }
  }
  const [{ n, tags }] =
    await admin`SELECT (SELECT count(*) FROM events) + (SELECT count(*) FROM events_x) AS n, (SELECT count(*) FROM event_tags) + (SELECT count(*) FROM event_tags_x) AS tags`;
  if (Number(n) !== written || Number(tags) !== written * 2)
    throw new Error(`${n} events and ${tags} tag rows stored, ${written} written`);
  await admin.close();
  console.log(`batches of ${BATCH}, ${ROUNDS} rounds of ${SECONDS} s, medians\n`);
  console.log("| way | writers | events/s | PostgreSQL CPU µs/event | order held µs/event |\n|---|---|---|---|---|");
  for (const [key, r] of Object.entries(results)) {
    const [name, writers] = key.split("|");
    const heldUs = median(r.heldUs);
    console.log(
      `| ${name} | ${writers} | ${Math.round(median(r.rate))} | ${median(r.pgUs).toFixed(1)} | ${Number.isNaN(heldUs) ? "" : heldUs.toFixed(1)} |`,
    );
  }
} finally {
  await cluster.stop();
}
