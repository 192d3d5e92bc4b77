// PostgreSQL: ingest with 1, 2 and 3 instances of the binary on one database (a throwaway cluster
// on this machine), next to the bare baseline and to SQLite in the same run; and reading at scale
// on PostgreSQL. Every instance, the database and wrk share this machine's cores.
import { SQL } from "bun";
import { createDatabase, startCluster } from "../pg-cluster.ts";
import { feedBenchmark } from "./feed.ts";
import { EVENT } from "./ingest.ts";
import { BUN, median, postScript, ROOT, startProcess, tempDir, wrk } from "./lib.ts";
import { BENCH_OWNER } from "./seed.ts";
import { join } from "node:path";

type Options = { rounds: number; seconds: number; binary: string[]; events: number };

/** wrk against each instance at once (connections split between them); requests per second in all. */
async function together(urls: string[], connections: number, seconds: number, script: string): Promise<{ rps: number; errors: number }> {
  const runs = urls.map((url) => Bun.spawn(["wrk", "-t1", `-c${Math.max(1, Math.round(connections / urls.length))}`, `-d${seconds}s`, "-s", script, url], { stdout: "pipe", stderr: "ignore" }));
  const outs = await Promise.all(runs.map((p) => new Response(p.stdout).text()));
  return {
    rps: outs.reduce((sum, out) => sum + Number(/Requests\/sec:\s+([\d.]+)/.exec(out)?.[1] ?? 0), 0),
    errors: outs.reduce((sum, out) => sum + Number(/Non-2xx or 3xx responses:\s+(\d+)/.exec(out)?.[1] ?? 0), 0),
  };
}

export async function postgresBenchmark({ rounds, seconds, binary, events }: Options) {
  console.error("starting a PostgreSQL cluster...");
  const cluster = await startCluster();
  const ingestRows: (string | number)[][] = [["store", "instances", "connections", "req/s (median)", "bare req/s", "ratio to bare"]];
  let readRows: (string | number)[][] = [];
  let seedSeconds = 0;
  try {
    const database = await createDatabase(cluster.url, "bench");
    const token = Bun.spawnSync([...binary, "token", "create", "--name", "bench", "--database-url", database]).stdout.toString().trim().split("\n").at(-1)!;
    const headers = { "Content-Type": "application/json", Authorization: `Bearer ${token}` };
    const script = postScript("pg-log", EVENT, headers);
    const bare = await startProcess([BUN, join(ROOT, "test/bench/bare.ts")], { BENCH_TOKEN: token });
    try {
      const sqliteDir = tempDir();
      Bun.spawnSync([...binary, "token", "create", "--name", "bench", "--data-dir", sqliteDir]);
      const sqliteToken = Bun.spawnSync([...binary, "token", "create", "--name", "bench2", "--data-dir", sqliteDir]).stdout.toString().trim().split("\n").at(-1)!;
      const sqliteScript = postScript("sqlite-log", EVENT, { ...headers, Authorization: `Bearer ${sqliteToken}` });
      const setups: { store: string; count: number; args: string[]; script: string }[] = [
        { store: "SQLite (the default)", count: 1, args: ["--data-dir", sqliteDir], script: sqliteScript },
        { store: "PostgreSQL", count: 1, args: ["--database-url", database], script },
        { store: "PostgreSQL", count: 2, args: ["--database-url", database], script },
        { store: "PostgreSQL", count: 3, args: ["--database-url", database], script },
      ];
      for (const setup of setups) {
        const instances = await Promise.all(Array.from({ length: setup.count }, () => startProcess([...binary, "serve", "--port", "0", "--host", "127.0.0.1", "--data-dir", tempDir(), ...setup.args], { SIGNALBOARD_LOG_LEVEL: "info" })));
        try {
          const urls = instances.map((i) => `${i.url}/v1/log`);
          await together(urls, 64, 2, setup.script); // warm up
          const ours: number[] = [];
          const base: number[] = [];
          for (let round = 0; round < rounds; round++) {
            base.push(wrk(`${bare.url}/`, { connections: 64, seconds, script: setup.script }).rps);
            const r = await together(urls, 64, seconds, setup.script);
            if (r.errors) throw new Error(`${r.errors} requests failed against ${setup.store} × ${setup.count}`);
            ours.push(r.rps);
          }
          ingestRows.push([setup.store, setup.count, 64, Math.round(median(ours)), Math.round(median(base)), (median(ours) / median(base)).toFixed(2)]);
        } finally {
          await Promise.all(instances.map((i) => i.stop()));
        }
      }
    } finally {
      await bare.stop();
    }

    const big = await createDatabase(cluster.url, "bench_read");
    const result = await feedBenchmark(events, 30, binary, { args: ["--database-url", big], seed: () => seedPostgres(binary, big, events) });
    readRows = result.rows;
    seedSeconds = result.seedSeconds;
  } finally {
    await cluster.stop();
  }
  return { ingestRows, readRows, seedSeconds };
}

/** The bench data set (as seed.ts makes it for SQLite) in PostgreSQL: in a few statements, ids from the counter. */
export async function seedPostgres(binary: string[], url: string, count: number): Promise<{ seconds: number }> {
  const started = performance.now();
  Bun.spawnSync([...binary, "project", "create", "bench", "--database-url", url]); // migrates, and the project
  const user = Bun.spawn([...binary, "user", "create", BENCH_OWNER.username, "--owner", "--password-stdin", "--database-url", url], { stdin: "pipe" });
  user.stdin.write(BENCH_OWNER.password);
  await user.stdin.end();
  await user.exited;
  const sql = new SQL(url, { max: 1 });
  try {
    const [{ id: project }] = (await sql`SELECT id FROM projects WHERE name = 'bench'`) as [{ id: number }];
    for (const name of ["big", "payments", "signups", "deploys"]) await sql`INSERT INTO channels (project_id, name, created_at) VALUES (${project}, ${name}, ${Date.now()}) ON CONFLICT DO NOTHING`;
    const now = Date.now();
    const span = 60 * 86_400_000;
    await sql.begin(async (tx) => {
      await tx`SELECT last_id FROM event_ids FOR UPDATE`;
      await tx.unsafe(`
        INSERT INTO events (id, project_id, channel_id, event, description, icon, notify, parser, user_id, tags, ts, received_at, historical, search_text)
        SELECT g, ${project},
               (SELECT id FROM channels WHERE project_id = ${project} AND name = CASE WHEN g % 20 < 17 THEN 'big' ELSE (ARRAY['payments','signups','deploys'])[1 + g % 3] END),
               CASE WHEN g % 7 = 0 THEN 'Payment received' ELSE 'Page viewed' END,
               'Request ' || g || ' from host web-' || (g % 13) || ' took ' || (g % 500) || ' ms',
               '📈', false, 'text', 'user-' || (g % 5000),
               json_build_object('plan', (ARRAY['free','pro','team','enterprise'])[1 + g % 4], 'region', CASE WHEN g % 2 = 1 THEN 'eu' ELSE 'us' END, 'build', g % 100)::text,
               ${now - span} + floor(g::float8 / ${count} * ${span})::bigint, ${now}, true,
               CASE WHEN g % 7 = 0 THEN 'payment received' ELSE 'page viewed' END || ' request ' || g || ' from host web ' || (g % 13) || ' took ' || (g % 500) || ' ms'
          FROM generate_series(1, ${count}) g`);
      await tx.unsafe(`
        INSERT INTO event_tags (project_id, key, value, ts, event_id)
        SELECT e.project_id, t.key, t.value, e.ts, e.id FROM events e, json_each_text(e.tags::json) t WHERE e.project_id = ${project}`);
      await tx`UPDATE event_ids SET last_id = ${count}`;
    });
    await sql`ANALYZE`;
  } finally {
    await sql.close();
  }
  return { seconds: (performance.now() - started) / 1000 };
}
