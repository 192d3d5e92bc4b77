// What an index on events costs PostgreSQL's ingest, at the SQL level without HTTP: batches of B
// events written as the server writes them (write_events, acknowledged once the WAL is on disk) by
// one writer, into two databases of one throwaway cluster, one with the index and one without it,
// in alternating rounds so a busier minute on this machine hits both. PostgreSQL's CPU time per
// event (every process of the cluster, from /proc) is what the index adds to; events a second
// depend more on what else the machine runs.
//   bun test/bench/pg-index-cost.ts [index=events_name_ts] [batch=32] [seconds=4] [rounds=4]
import { SQL } from "bun";
import { newEvent } from "../../src/domain/ingest-writes.ts";
import type { StoredEvent } from "../../src/model/event.ts";
import type { Project } from "../../src/model/project.ts";
import { writeEvents } from "../../src/store/pg/events.ts";
import { openPgStore } from "../../src/store/pg/index.ts";
import { WalOnDisk } from "../../src/store/pg/wal.ts";
import { createDatabase, startCluster } from "../pg-cluster.ts";
import { EVENT } from "./ingest.ts";
import { median, pgCpu } from "./lib.ts";

const [index = "events_name_ts", batchArg = "32", secondsArg = "4", roundsArg = "4"] = process.argv.slice(2);
const [BATCH, SECONDS, ROUNDS] = [Number(batchArg), Number(secondsArg), Number(roundsArg)];
if (!/^[a-z_][a-z0-9_]*$/.test(index)) throw new Error(`not an index name: ${index}`);
// A few names, users and channels, so the index's entries go where real ones would.
const NAMES = ["Deployed v1.4.2", "Page viewed", "Checkout started", "Payment received", "Signed up"];

const cluster = await startCluster();
try {
  const port = Number(new URL(cluster.url).port);
  const setups: { name: string; url: string; project: Project; channelId: number; cpu: number[]; rate: number[] }[] =
    [];
  for (const name of [`with ${index}`, `without ${index}`]) {
    const url = await createDatabase(cluster.url, "indexcost");
    await (await openPgStore(url)).close(); // the schema, as the migrations make it
    const admin = new SQL(url, { max: 1 });
    if (name.startsWith("without")) await admin.unsafe(`DROP INDEX ${index}`);
    const [project] =
      (await admin`INSERT INTO projects (name, created_at) VALUES ('default', 0) RETURNING id, name, retention_days AS "retentionDays", created_at AS "createdAt"`) as [
        Project,
      ];
    const [{ id: channelId }] =
      await admin`INSERT INTO channels (project_id, name, created_at) VALUES (${project.id}, 'deploys', 0) RETURNING id`;
    await admin.close();
    setups.push({ name, url, project, channelId, cpu: [], rate: [] });
  }
  let n = 0;
  for (let round = 0; round < ROUNDS; round++) {
    for (const setup of round % 2 ? [...setups].reverse() : setups) {
      const client = new SQL(setup.url, { max: 2 });
      await client`SELECT 1`;
      const wal = new WalOnDisk(client);
      const cpu = pgCpu(port);
      const started = performance.now();
      let events = 0;
      while (performance.now() < started + SECONDS * 1000) {
        const rows = Array.from(
          { length: BATCH },
          () =>
            newEvent(
              setup.project,
              setup.channelId,
              { ...EVENT, event: NAMES[n % NAMES.length]!, userId: `user-${n++ % 5000}` },
              Date.now(),
            ) as StoredEvent,
        );
        const written = await writeEvents(client, rows, "bench", true);
        await wal.wait(written.wal!);
        events += BATCH;
      }
      setup.rate.push(events / ((performance.now() - started) / 1000));
      setup.cpu.push((cpu() * 1e6) / events);
      await client.close();
    }
  }
  console.log(`batches of ${BATCH}, one writer, ${ROUNDS} alternating rounds of ${SECONDS} s; medians (ranges)\n`);
  console.log("| database | events/s | PostgreSQL CPU µs/event |\n|---|---|---|");
  for (const s of setups) {
    const range = (v: number[], d: number) =>
      `${median(v).toFixed(d)} (${Math.min(...v).toFixed(d)}-${Math.max(...v).toFixed(d)})`;
    console.log(`| ${s.name} | ${range(s.rate, 0)} | ${range(s.cpu, 1)} |`);
  }
} finally {
  await cluster.stop();
}
