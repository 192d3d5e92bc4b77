// npm test: the whole suite on SQLite (the default store), and the storage, API and live tests
// again on PostgreSQL, in a throwaway cluster started here on 127.0.0.1 and removed afterwards,
// with the tests that only several instances on one database can run. Without PostgreSQL
// installed, that second pass is skipped, and says so (SIGNALBOARD_REQUIRE_POSTGRES=1 makes it a
// failure, as in CI). Arguments go to one `bun test` (then only the first pass runs them, on the
// store that SIGNALBOARD_TEST_POSTGRES names, if any).
//
// The files are independent (each starts its own servers on free ports, data directories and
// databases), so both passes run at once: each long file is one `bun test` process, the short ones
// share a process a few at a time, SIGNALBOARD_TEST_JOBS processes at a time (twice the cores unless
// set), the longest first (as long as it took the last time here, test-results/timings.json, or a
// guess by what it starts). What a process prints is shown whole when it ends, under a line naming
// its files, pass and CPU; a summary of each pass follows, and the exit code fails if any file failed.
// The tests that start Signalboard as a process start a binary compiled here first (PROGRAM in
// test/e2e/process.ts).
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { availableParallelism, tmpdir } from "node:os";
import { join } from "node:path";
import { postgresBin, startCluster } from "../test/pg-cluster.ts";

const bun = process.execPath;
const ROOT = join(import.meta.dir, "..");
/**
 * Each test's limit: a hang's, not a speed's (a test that takes long on a machine busy with other
 * work still passes); a test that must wait longer says so itself.
 */
const TIMEOUT = ["--timeout", "240000"];
/** What runs on PostgreSQL too: everything that reads or writes the store, over HTTP and live. */
const ON_POSTGRES = [
  "test/http/",
  "test/unit/filter.test.ts",
  "test/unit/sse.test.ts",
  "test/unit/summaries.test.ts",
  "test/unit/store-contract.test.ts",
  "test/pg/",
];
/** A file that runs longer than this is stopped, and fails: a hang shows as a failure, not a stuck run. */
const FILE_LIMIT_MS = 10 * 60_000;
const TIMINGS = join(ROOT, "test-results", "timings.json");

const args = process.argv.slice(2);
if (args.length) {
  const result = Bun.spawnSync([bun, "test", ...TIMEOUT, ...args], { stdio: ["inherit", "inherit", "inherit"] });
  process.exit(result.exitCode ?? 1);
}

type Pass = "SQLite" | "PostgreSQL";
/** One `bun test` process: a file, or several short ones of one pass (see SHORT). */
type Job = { files: string[]; pass: Pass; env: Record<string, string> };
type Done = Job & { code: number; seconds: number; cpu: number; passed: number; failed: number };

const files = [...new Bun.Glob("test/**/*.test.ts").scanSync({ cwd: ROOT })].sort();
if (!files.length) {
  console.log(`==== no test files under ${join(ROOT, "test")} ====`);
  process.exit(1);
}
const key = (pass: Pass, file: string) => `${pass} ${file}`;
let timings: Record<string, number> = {};
try {
  timings = JSON.parse(readFileSync(TIMINGS, "utf8"));
} catch {
  // no run yet here: guesses
}
/** The files that drive Chromium (see `browsers` below). */
const inBrowser = new Set(files.filter((file) => readFileSync(join(ROOT, file), "utf8").includes("describeBrowser")));
/** Without a time of its own: what it starts says most (a build, a browser), then its directory. */
function guess(file: string): number {
  const source = readFileSync(join(ROOT, file), "utf8");
  if (/scripts\/(build|image)\.ts/.test(source)) return 90;
  if (inBrowser.has(file)) return 60;
  return file.startsWith("test/e2e/") ? 20 : file.startsWith("test/pg/") ? 15 : file.startsWith("test/http/") ? 4 : 1;
}
const fileCost = (pass: Pass, file: string) => timings[key(pass, file)] ?? guess(file);
const cost = (job: Job) => job.files.reduce((n, file) => n + fileCost(job.pass, file), 0);
/**
 * Files that take less than SHORT seconds run together, BATCH seconds of them to a process: each
 * process imports the whole app before its first test (half a second of CPU), and most files are short.
 */
const SHORT = 10;
const BATCH = 30;
function batched(pass: Pass, passFiles: string[], env: Record<string, string>): Job[] {
  const out: Job[] = [];
  let batch: Job | null = null;
  for (const file of passFiles) {
    if (fileCost(pass, file) >= SHORT) {
      out.push({ files: [file], pass, env });
      continue;
    }
    if (!batch || cost(batch) + fileCost(pass, file) > BATCH) out.push((batch = { files: [], pass, env }));
    batch.files.push(file);
  }
  return out;
}

const started = performance.now();
// The program the tests start as a process (the CLI, servers killed mid-write) is compiled once here,
// from this source, as npm run build does: it starts in a quarter of the time the source takes.
const binaryDir = mkdtempSync(join(tmpdir(), "signalboard-test-binary-"));
const binary = join(binaryDir, "signalboard");
const built = Bun.spawnSync([bun, join(ROOT, "scripts/build.ts"), binary], {
  cwd: ROOT,
  stdout: "pipe",
  stderr: "pipe",
});
if (!built.success) {
  console.log(`==== the build failed, so no test ran ====\n${built.stdout}${built.stderr}`);
  process.exit(1);
}
const shared = { SIGNALBOARD_TEST_BINARY: binary };
const jobs: Job[] = batched("SQLite", files, shared);
let cluster: Awaited<ReturnType<typeof startCluster>> | null = null;
let postgres: "ran" | "skipped" | "missing" = "ran";
if (!postgresBin()) {
  postgres = process.env.SIGNALBOARD_REQUIRE_POSTGRES === "1" ? "missing" : "skipped";
  console.log(
    `==== PostgreSQL pass ${postgres === "missing" ? "FAILED" : "SKIPPED"}: PostgreSQL is not installed (apt-get install -y postgresql) ====\n`,
  );
} else {
  cluster = await startCluster();
  const env = { ...shared, SIGNALBOARD_TEST_POSTGRES: cluster.url };
  const onPostgres = files.filter((file) =>
    ON_POSTGRES.some((on) => (on.endsWith("/") ? file.startsWith(on) : file === on)),
  );
  jobs.push(...batched("PostgreSQL", onPostgres, env));
}
const stopCluster = async () => {
  const c = cluster;
  cluster = null;
  await c?.stop();
};
process.on(
  "SIGINT",
  () =>
    void stopCluster().then(() => {
      rmSync(binaryDir, { recursive: true, force: true });
      process.exit(130);
    }),
);

const workers = Number(process.env.SIGNALBOARD_TEST_JOBS) || Math.max(2, 2 * availableParallelism());
const queue = jobs.sort((a, b) => cost(b) - cost(a));
const count = (pass: Pass) => jobs.filter((j) => j.pass === pass).reduce((n, j) => n + j.files.length, 0);
console.log(
  `==== ${count("SQLite") + count("PostgreSQL")} test files (${count("SQLite")} on SQLite, ${count("PostgreSQL")} on PostgreSQL) in ${queue.length} processes, ${workers} at a time ====\n`,
);

async function runJob(job: Job): Promise<Done> {
  const began = performance.now();
  const proc = Bun.spawn([bun, "test", ...TIMEOUT, ...job.files.map((file) => `./${file}`)], {
    cwd: ROOT,
    env: { ...process.env, ...job.env },
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
  const limit = setTimeout(() => proc.kill("SIGKILL"), FILE_LIMIT_MS);
  // Both pipes into one text, in the order they were written (near enough: bun test reports on stderr).
  let output = "";
  const decoder = new TextDecoder();
  const drain = async (stream: ReadableStream<Uint8Array>) => {
    for await (const chunk of stream) output += decoder.decode(chunk, { stream: true });
  };
  await Promise.all([drain(proc.stdout), drain(proc.stderr)]);
  const code = await proc.exited;
  clearTimeout(limit);
  const seconds = (performance.now() - began) / 1000;
  // Its own CPU and that of what it started and waited for (servers, browsers, the CLI).
  const cpu = Number(proc.resourceUsage()?.cpuTime.total ?? 0) / 1e6;
  const tally = (word: string) => Number(new RegExp(`^ (\\d+) ${word}$`, "m").exec(output)?.[1] ?? 0);
  const done: Done = { ...job, code, seconds, cpu, passed: tally("pass"), failed: tally("fail") };
  const note = proc.signalCode === "SIGKILL" ? `, stopped after ${FILE_LIMIT_MS / 60_000} min` : "";
  console.log(
    `---- ${job.files.join(", ")} on ${job.pass}: ${code ? "FAILED" : "passed"} (${done.passed} pass, ${done.failed} fail, ${seconds.toFixed(1)} s, ${cpu.toFixed(1)} s of CPU${note}) ----`,
  );
  console.log(output.trimEnd());
  console.log("");
  return done;
}

const results: Done[] = [];
/**
 * Chromium draws with every core it gets: two browser files at once on two cores starve each other
 * and everything beside them, and a test that runs out of time takes its browser with it. So at
 * most SIGNALBOARD_TEST_BROWSERS files drive a browser at once (one for every two cores unless set);
 * the other processes take the files without one meanwhile.
 */
const browsers = Number(process.env.SIGNALBOARD_TEST_BROWSERS) || Math.max(1, Math.floor(availableParallelism() / 2));
const drivesBrowser = (job: Job) => job.files.some((file) => inBrowser.has(file));
let browsing = 0;
const waiting: (() => void)[] = [];
/** The longest job that may start now, or null to wait for a browser, or undefined when none is left. */
function next(): Job | null | undefined {
  if (!queue.length) return undefined;
  const i = queue.findIndex((job) => browsing < browsers || !drivesBrowser(job));
  return i < 0 ? null : queue.splice(i, 1)[0];
}
await Promise.all(
  Array.from({ length: Math.min(workers, queue.length) }, async () => {
    for (let job = next(); job !== undefined; job = next()) {
      if (job === null) {
        await new Promise<void>((resolve) => waiting.push(resolve));
        continue;
      }
      const browser = drivesBrowser(job);
      if (browser) browsing++;
      try {
        results.push(await runJob(job));
      } finally {
        if (browser) {
          browsing--;
          for (const wake of waiting.splice(0)) wake();
        }
      }
    }
  }),
);
const serverCpu = cluster?.cpuSeconds() ?? 0;
await stopCluster();
rmSync(binaryDir, { recursive: true, force: true });

/** A process's time shared among its files as they were expected to share it. */
function fileTimes(done: Done): [string, number][] {
  const whole = cost(done);
  return done.files.map((file) => [
    key(done.pass, file),
    Math.round(((done.seconds * fileCost(done.pass, file)) / whole) * 10) / 10,
  ]);
}
mkdirSync(join(ROOT, "test-results"), { recursive: true });
writeFileSync(TIMINGS, `${JSON.stringify(Object.fromEntries(results.flatMap(fileTimes)), null, 2)}\n`);

const wall = (performance.now() - started) / 1000;
console.log(`==== done in ${wall.toFixed(0)} s ====`);
const summary = (pass: Pass): boolean => {
  const ran = results.filter((r) => r.pass === pass);
  const failed = ran.filter((r) => r.code !== 0);
  const tests = ran.reduce((n, r) => n + r.passed + r.failed, 0);
  const fails = ran.reduce((n, r) => n + r.failed, 0);
  const seconds = ran.reduce((n, r) => n + r.seconds, 0);
  const cpu = ran.reduce((n, r) => n + r.cpu, 0);
  const files = ran.reduce((n, r) => n + r.files.length, 0);
  console.log(
    `==== ${pass}: ${failed.length ? "FAILED" : "passed"}: ${files} files, ${tests} tests, ${fails} failed, ${seconds.toFixed(0)} s in its processes, ${cpu.toFixed(0)} s of CPU ====`,
  );
  for (const r of failed) console.log(`     failed: ${r.files.join(", ")} (exit code ${r.code})`);
  return failed.length === 0;
};
const sqliteOk = summary("SQLite");
let postgresOk = postgres !== "missing";
if (postgres === "ran") {
  postgresOk = summary("PostgreSQL");
  console.log(`==== the PostgreSQL server: ${serverCpu.toFixed(0)} s of CPU ====`);
} else
  console.log(`==== PostgreSQL: ${postgres === "missing" ? "FAILED (not installed)" : "skipped (not installed)"} ====`);
process.exit(sqliteOk && postgresOk ? 0 : 1);
