// npm test: the whole suite on SQLite (the default store), then the storage, API and live tests
// again on PostgreSQL, in a throwaway cluster started here on 127.0.0.1 and removed afterwards,
// with the tests that only several instances on one database can run. Without PostgreSQL
// installed, that second pass is skipped, and says so (SIGNALBOARD_REQUIRE_POSTGRES=1 makes it a
// failure, as in CI). Arguments go to `bun test` (then only the first pass runs them, on the
// store that SIGNALBOARD_TEST_POSTGRES names, if any).
import { postgresBin, startCluster } from "../test/pg-cluster.ts";

const bun = process.execPath;
const TIMEOUT = ["--timeout", "60000"];
/** What runs on PostgreSQL too: everything that reads or writes the store, over HTTP and live. */
const ON_POSTGRES = [
  "test/http",
  "test/unit/filter.test.ts",
  "test/unit/sse.test.ts",
  "test/unit/summaries.test.ts",
  "test/unit/store-contract.test.ts",
  "test/pg",
];

function run(args: string[], env: Record<string, string> = {}): number {
  const result = Bun.spawnSync([bun, "test", ...TIMEOUT, ...args], {
    stdio: ["inherit", "inherit", "inherit"],
    env: { ...process.env, ...env },
  });
  return result.exitCode ?? 1;
}

const args = process.argv.slice(2);
if (args.length) process.exit(run(args));

console.log("\n==== the suite, on SQLite ====\n");
const sqlite = run([], {});

let postgres = 0;
if (!postgresBin()) {
  const required = process.env.SIGNALBOARD_REQUIRE_POSTGRES === "1";
  console.log(
    `\n==== PostgreSQL pass ${required ? "FAILED" : "SKIPPED"}: PostgreSQL is not installed (apt-get install -y postgresql) ====\n`,
  );
  postgres = required ? 1 : 0;
} else {
  console.log("\n==== the storage, API and live tests, on PostgreSQL ====\n");
  const cluster = await startCluster();
  const stop = () => cluster.stop();
  process.on("SIGINT", () => void stop().then(() => process.exit(130)));
  try {
    postgres = run(ON_POSTGRES, { SIGNALBOARD_TEST_POSTGRES: cluster.url });
  } finally {
    await stop();
  }
}
console.log(
  `\n==== SQLite: ${sqlite === 0 ? "passed" : "FAILED"}; PostgreSQL: ${postgres === 0 ? (postgresBin() ? "passed" : "skipped") : "FAILED"} ====`,
);
process.exit(sqlite || postgres);
