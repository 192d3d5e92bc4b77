// PostgreSQL: ingest with 1, 2 and 3 instances of the binary on one database (a throwaway cluster
// on this machine), next to the bare baseline and to SQLite in the same run; and reading at scale
// on PostgreSQL. Every instance, the database and wrk share this machine's cores.
import { SQL } from "bun";
import { openPgStore } from "../../src/store/pg/index.ts";
import { createDatabase, startCluster } from "../pg-cluster.ts";
import { feedBenchmark } from "./feed.ts";
import { EVENT } from "./ingest.ts";
import { BUN, cpuSeconds, median, pgCpu, postScript, type Proc, ROOT, startProcess, tempDir, wrk } from "./lib.ts";
import { BENCH_OWNER, BENCH_USERS, EVENT_NAMES, NOTICE_EVERY, NOTICE_THINGS } from "./seed.ts";
import { join } from "node:path";

type Options = { rounds: number; seconds: number; binary: string[]; events: number };
type Setup = { store: string; count: number; procs: Proc[]; script: string; token: string; port?: number };
type Sample = { rps: number; serverUs: number; pgUs: number; wrkUs: number; heldUs: number };

/** Seconds the instances' batches held the cluster-wide event order so far (their /metrics, summed). */
async function orderHeld(setup: Setup): Promise<number> {
  if (!setup.port) return 0;
  const texts = await Promise.all(
    setup.procs.map((p) =>
      fetch(`${p.url}/metrics`, { headers: { Authorization: `Bearer ${setup.token}` } }).then((r) => r.text()),
    ),
  );
  return texts.reduce(
    (total, text) => total + Number(/^signalboard_writer_order_held_seconds_total (\S+)$/m.exec(text)?.[1] ?? NaN),
    0,
  );
}

/** wrk against each instance at once (connections split between them); requests per second in all, and wrk's CPU time. */
async function together(
  urls: string[],
  connections: number,
  seconds: number,
  script: string,
): Promise<{ rps: number; requests: number; errors: number; wrkCpu: number }> {
  const runs = urls.map((url) =>
    Bun.spawn(
      ["wrk", "-t1", `-c${Math.max(1, Math.round(connections / urls.length))}`, `-d${seconds}s`, "-s", script, url],
      { stdout: "pipe", stderr: "ignore" },
    ),
  );
  const outs = await Promise.all(runs.map((p) => new Response(p.stdout).text()));
  await Promise.all(runs.map((p) => p.exited));
  const sum = (re: RegExp) => outs.reduce((total, out) => total + Number(re.exec(out)?.[1] ?? 0), 0);
  const usage = runs.map((p) => p.resourceUsage()?.cpuTime);
  return {
    rps: sum(/Requests\/sec:\s+([\d.]+)/),
    requests: sum(/(\d+) requests in/),
    errors: sum(/Non-2xx or 3xx responses:\s+(\d+)/),
    wrkCpu: usage.reduce((total, u) => total + (u ? Number(u.user + u.system) / 1e6 : 0), 0),
  };
}

/** One measured run of a setup: its rate, and CPU µs per event in its instances, in PostgreSQL and in wrk. */
async function measure(setup: Setup, seconds: number): Promise<Sample> {
  const server = () => setup.procs.reduce((total, p) => total + cpuSeconds(p.pid), 0);
  const before = server();
  const held = await orderHeld(setup);
  const pg = setup.port ? pgCpu(setup.port) : () => 0;
  const r = await together(
    setup.procs.map((p) => `${p.url}/v1/log`),
    64,
    seconds,
    setup.script,
  );
  if (r.errors) throw new Error(`${r.errors} requests failed against ${setup.store} × ${setup.count}`);
  const per = (cpu: number) => (cpu * 1e6) / r.requests;
  return {
    rps: r.rps,
    serverUs: per(server() - before),
    pgUs: per(pg()),
    wrkUs: per(r.wrkCpu),
    heldUs: per((await orderHeld(setup)) - held),
  };
}

/**
 * BENCH_PG_DROP_INDEXES=name,...: indexes dropped once the migrations made them, before any event
 * is written, so a run without them beside one with them says what they cost ingest.
 */
async function dropIndexes(database: string): Promise<void> {
  const names = (process.env.BENCH_PG_DROP_INDEXES ?? "").split(",").filter(Boolean);
  if (!names.length) return;
  const sql = new SQL(database, { max: 1 });
  try {
    for (const name of names) {
      if (!/^[a-z_][a-z0-9_]*$/.test(name)) throw new Error(`not an index name: ${name}`);
      await sql.unsafe(`DROP INDEX ${name}`);
    }
  } finally {
    await sql.close();
  }
  console.error(`  dropped ${names.join(", ")} in ${new URL(database).pathname.slice(1)}`);
}

/**
 * Ingest on SQLite and on 1, 2 and 3 PostgreSQL instances (each count on a database of its own,
 * so idle instances follow nothing), measured in alternating rounds: every round runs the bare
 * baseline and each setup once, so a slower minute on this shared machine hits all of them.
 */
export async function postgresIngest({ rounds, seconds, binary }: Omit<Options, "events">, clusterUrl: string) {
  const port = Number(new URL(clusterUrl).port);
  const started: Proc[] = [];
  const start = async (count: number, args: string[]) => {
    const procs = await Promise.all(
      Array.from({ length: count }, () =>
        startProcess([...binary, "serve", "--port", "0", "--host", "127.0.0.1", "--data-dir", tempDir(), ...args], {
          SIGNALBOARD_LOG_LEVEL: "info",
          SIGNALBOARD_METRICS: "true",
        }),
      ),
    );
    started.push(...procs);
    return procs;
  };
  /** A full-access token made by the binary's own command on the store `args` name (its secret is the last line). */
  const createToken = (args: string[]) =>
    Bun.spawnSync([...binary, "token", "create", "--init", "--name", "bench", ...args])
      .stdout.toString()
      .trim()
      .split("\n")
      .at(-1)!;
  try {
    const sqliteDir = tempDir();
    const sqliteToken = createToken(["--data-dir", sqliteDir]);
    const headers = (token: string) => ({ "Content-Type": "application/json", Authorization: `Bearer ${token}` });
    const setups: Setup[] = [
      {
        store: "SQLite (the default)",
        count: 1,
        procs: await start(1, ["--data-dir", sqliteDir]),
        script: postScript("sqlite-log", EVENT, headers(sqliteToken)),
        token: sqliteToken,
      },
    ];
    for (const count of [1, 2, 3]) {
      const database = await createDatabase(clusterUrl, `bench${count}`);
      const token = createToken(["--database-url", database]);
      await dropIndexes(database);
      setups.push({
        store: "PostgreSQL",
        count,
        procs: await start(count, ["--database-url", database]),
        script: postScript(`pg-log-${count}`, EVENT, headers(token)),
        token,
        port,
      });
    }
    const bare = await startProcess([BUN, join(ROOT, "test/bench/bare.ts")], { BENCH_TOKEN: sqliteToken });
    started.push(bare);
    for (const setup of setups)
      await together(
        setup.procs.map((p) => `${p.url}/v1/log`),
        64,
        2,
        setup.script,
      ); // warm up
    const samples = setups.map(() => [] as Sample[]);
    const ratios = setups.map(() => [] as number[]);
    const base: number[] = [];
    for (let round = 0; round < rounds; round++) {
      base.push(wrk(`${bare.url}/`, { connections: 64, seconds, script: setups[0]!.script }).rps);
      for (const [i, setup] of setups.entries()) samples[i]!.push(await measure(setup, seconds));
      console.error(
        `round ${round + 1}:`,
        setups.map((s, i) => `${s.store} × ${s.count} ${Math.round(samples[i]!.at(-1)!.rps)}/s`).join(", "),
      );
      // Each setup against SQLite and against one PostgreSQL instance, within the round.
      for (const i of setups.keys())
        ratios[i]!.push(
          samples[i]!.at(-1)!.rps / samples[0]!.at(-1)!.rps,
          samples[i]!.at(-1)!.rps / samples[1]!.at(-1)!.rps,
        );
    }
    const rows: (string | number)[][] = [
      [
        "store",
        "instances",
        "req/s (median)",
        "ratio to bare",
        "ratio to SQLite",
        "ratio to one instance",
        "server CPU µs/event",
        "PostgreSQL CPU µs/event",
        "wrk CPU µs/event",
        "order held µs/event",
        "target",
      ],
    ];
    const targets = ["", "≥ 0.5 of SQLite", "≥ 1 instance", ""];
    const medians = setups.map((_, i) => ({
      rps: median(samples[i]!.map((s) => s.rps)),
      serverUs: median(samples[i]!.map((s) => s.serverUs)),
      pgUs: median(samples[i]!.map((s) => s.pgUs)),
      wrkUs: median(samples[i]!.map((s) => s.wrkUs)),
      heldUs: median(samples[i]!.map((s) => s.heldUs)),
      toSqlite: median(ratios[i]!.filter((_, j) => j % 2 === 0)),
      toOne: median(ratios[i]!.filter((_, j) => j % 2 === 1)),
    }));
    for (const [i, setup] of setups.entries()) {
      const m = medians[i]!;
      rows.push([
        setup.store,
        setup.count,
        Math.round(m.rps),
        (m.rps / median(base)).toFixed(2),
        m.toSqlite.toFixed(2),
        setup.port ? m.toOne.toFixed(2) : "",
        m.serverUs.toFixed(1),
        setup.port ? m.pgUs.toFixed(1) : "",
        m.wrkUs.toFixed(1),
        setup.port ? m.heldUs.toFixed(1) : "",
        targets[i] ?? "",
      ]);
    }
    return { rows, model: scaleModel(medians.slice(1).map((m, i) => ({ instances: i + 1, ...m }))) };
  } finally {
    await Promise.all(started.map((p) => p.stop()));
  }
}

/**
 * What 1, 2 and 3 instances would give with cores of their own, from the costs per event measured
 * with as many here: n instances with a core each take n × 1e6 / (their CPU µs per event, all
 * together: each follows every event besides answering its share). The cluster-wide order is held
 * by one batch at a time, for as long as its rows take to write: it allows 1e6 / (µs held per
 * event), taken from the run where it was held the shortest (here its holder also waits for
 * cores that wrk and the instances share, the more so the more instances). PostgreSQL then needs
 * its CPU per event times the rate in cores, and wrk its own.
 */
function scaleModel(
  measured: { instances: number; serverUs: number; pgUs: number; wrkUs: number; heldUs: number }[],
): (string | number)[][] {
  const heldUs = Math.min(...measured.map((m) => m.heldUs));
  const order = 1e6 / Math.max(heldUs, 0.01);
  const rows: (string | number)[][] = [
    [
      "instances, a core each",
      "events/s the instances can take",
      `events/s the order allows (${heldUs.toFixed(1)} µs held per event)`,
      "model: events/s",
      "PostgreSQL cores needed",
      "wrk cores needed",
    ],
  ];
  for (const m of measured) {
    const instances = (m.instances * 1e6) / m.serverUs;
    const rate = Math.min(instances, order);
    rows.push([
      m.instances,
      Math.round(instances),
      Math.round(order),
      Math.round(rate),
      ((rate * m.pgUs) / 1e6).toFixed(2),
      ((rate * m.wrkUs) / 1e6).toFixed(2),
    ]);
  }
  return rows;
}

export async function postgresBenchmark(
  { rounds, seconds, binary, events }: Options,
  { ingest = true, read = true } = {},
) {
  console.error("starting a PostgreSQL cluster...");
  const cluster = await startCluster();
  let ingestRows: (string | number)[][] = [];
  let modelRows: (string | number)[][] = [];
  let readRows: (string | number)[][] = [];
  let seedSeconds = 0;
  try {
    if (ingest)
      ({ rows: ingestRows, model: modelRows } = await postgresIngest({ rounds, seconds, binary }, cluster.url));
    if (read) {
      const big = await createDatabase(cluster.url, "bench_read");
      const result = await feedBenchmark(events, 30, binary, {
        args: ["--database-url", big],
        seed: () => seedPostgres(binary, big, events),
      });
      readRows = result.rows;
      seedSeconds = result.seedSeconds;
    }
  } finally {
    await cluster.stop();
  }
  return { ingestRows, modelRows, readRows, seedSeconds };
}

/** The bench data set (as seed.ts makes it for SQLite) in PostgreSQL: in a few statements, ids from the counter. */
export async function seedPostgres(
  binary: string[],
  url: string,
  count: number,
): Promise<{ seconds: number; summarySeconds: number }> {
  const started = performance.now();
  Bun.spawnSync([...binary, "project", "create", "--init", "bench", "--database-url", url]); // migrates, and the project
  const user = Bun.spawn(
    [...binary, "user", "create", BENCH_OWNER.username, "--owner", "--password-stdin", "--database-url", url],
    { stdin: "pipe" },
  );
  user.stdin.write(BENCH_OWNER.password);
  await user.stdin.end();
  await user.exited;
  const sql = new SQL(url, { max: 1 });
  try {
    const [{ id: project }] = (await sql`SELECT id FROM projects WHERE name = 'bench'`) as [{ id: number }];
    // Its summaries are built once all its events are in, as after an upgrade (the trigger that keeps
    // them skips a project being built), in steps far larger than the server's.
    await sql`INSERT INTO summary_builds (project_id, through) VALUES (${project}, -1) ON CONFLICT (project_id) DO UPDATE SET through = -1`;
    for (const name of ["big", "payments", "signups", "deploys", "alerts"])
      await sql`INSERT INTO channels (project_id, name, created_at) VALUES (${project}, ${name}, ${Date.now()}) ON CONFLICT DO NOTHING`;
    const now = Date.now();
    const span = 60 * 86_400_000;
    const names = `(ARRAY[${EVENT_NAMES.map((n) => `'${n}'`).join(",")}])`;
    await sql.begin(async (tx) => {
      await tx`SELECT last_id FROM event_ids FOR UPDATE`;
      await tx.unsafe(`
        INSERT INTO events (id, project_id, channel_id, event, description, icon, notify, parser, user_id, tags, ts, received_at, historical, search_text)
        SELECT g, ${project},
               (SELECT id FROM channels WHERE project_id = ${project} AND name = CASE WHEN g % 20 < 17 THEN 'big' ELSE (ARRAY['payments','signups','deploys'])[1 + g % 3] END),
               ${names}[1 + g % 7],
               'Request ' || g || ' from host web-' || (g % 13) || ' took ' || (g % 500) || ' ms',
               '📈', false, 'text', 'user-' || (g % ${BENCH_USERS}),
               json_build_object('plan', (ARRAY['free','pro','team','enterprise'])[1 + g % 4], 'region', CASE WHEN g % 2 = 1 THEN 'eu' ELSE 'us' END, 'build', g % 100)::text,
               ${now - span} + floor(g::float8 / ${count} * ${span})::bigint, ${now}, true,
               lower(${names}[1 + g % 7]) || ' request ' || g || ' from host web ' || (g % 13) || ' took ' || (g % 500) || ' ms'
          FROM generate_series(1, ${count}) g`);
      // seed.ts's notices: one every NOTICE_EVERY events, at its time, of job-1..5 and rules 1..5 by turns.
      const notices = Math.ceil(count / NOTICE_EVERY);
      const things = 2 * NOTICE_THINGS;
      const down = `(n / ${things}) % 2 = 0`;
      await tx.unsafe(`
        INSERT INTO events (id, project_id, channel_id, event, description, icon, notify, parser, user_id, tags, ts, received_at, historical, search_text)
        SELECT ${count} + 1 + n, ${project}, (SELECT id FROM channels WHERE project_id = ${project} AND name = 'alerts'),
               x.event, '', '🚨', false, 'text', NULL, x.tags,
               ${now - span} + floor((n * ${NOTICE_EVERY})::float8 / ${count} * ${span})::bigint, ${now}, true, lower(x.event)
          FROM generate_series(0, ${notices - 1}) n,
          LATERAL (SELECT
            CASE WHEN n % ${things} < ${NOTICE_THINGS}
              THEN 'job-' || (n % ${things} + 1) || ' is ' || CASE WHEN ${down} THEN 'down' ELSE 'up' END
              ELSE 'Rule ' || (n % ${things} - ${NOTICE_THINGS - 1}) || ' is ' || CASE WHEN ${down} THEN 'firing' ELSE 'resolved' END
            END AS event,
            CASE WHEN n % ${things} < ${NOTICE_THINGS}
              THEN json_build_object('check', 'job-' || (n % ${things} + 1), 'state', CASE WHEN ${down} THEN 'down' ELSE 'up' END)
              ELSE json_build_object('alert', (n % ${things} - ${NOTICE_THINGS - 1})::text, 'state', CASE WHEN ${down} THEN 'firing' ELSE 'resolved' END)
            END::text AS tags) x`);
      await tx.unsafe(`
        INSERT INTO event_tags (project_id, key, value, ts, event_id)
        SELECT e.project_id, t.key, t.value, e.ts, e.id FROM events e, json_each_text(e.tags::json) t WHERE e.project_id = ${project}`);
      await tx`UPDATE event_ids SET last_id = ${count + notices}`;
    });
  } finally {
    await sql.close();
  }
  const building = performance.now();
  const store = await openPgStore(url);
  try {
    while (await store.events.buildSummaries(50_000));
  } finally {
    await store.close();
  }
  const summarySeconds = (performance.now() - building) / 1000;
  const after = new SQL(url, { max: 1 });
  try {
    await after`VACUUM ANALYZE`; // as autovacuum leaves a table that has settled: index-only scans need its visibility map
    await after`CHECKPOINT`; // the seed's pages written now, not by the checkpointer while the reads are timed
  } finally {
    await after.close();
  }
  return { seconds: (performance.now() - started) / 1000, summarySeconds };
}

/** What a PostgreSQL database takes on disk (its tables and indexes, the search index among them). */
export async function postgresBytes(url: string): Promise<number> {
  const sql = new SQL(url, { max: 1 });
  try {
    const [{ bytes }] = (await sql`SELECT pg_database_size(current_database())::float8 AS bytes`) as [
      { bytes: number },
    ];
    return bytes;
  } finally {
    await sql.close();
  }
}
