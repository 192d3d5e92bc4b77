// Seeds a data directory with many events, through the same store code the server uses, for the
// feed and search benchmarks. Run alone: bun test/bench/seed.ts DIR [COUNT]
import { join } from "node:path";
import { accountService } from "../../src/domain/accounts.ts";
import { openSqliteStore } from "../../src/store/sqlite/index.ts";
import { openIndexerConnection, prepareSearch, searchIndexer } from "../../src/store/sqlite/search.ts";

/** Users the events are spread over (each has an event about every 3 days of the 60). */
export const BENCH_USERS = 50_000;
/** The event names by i % 7: one in 7 is a payment, one in 7 a checkout (a funnel's steps), the rest page views. */
export const EVENT_NAMES = [
  "Payment received",
  "Page viewed",
  "Page viewed",
  "Checkout started",
  "Page viewed",
  "Page viewed",
  "Page viewed",
];

/** What the data set holds changed (2: alert notices): a kept one of an older version is not reused. */
export const SEED_VERSION = 2;

/** One alert notice for every this many events, in the `alerts` channel beside them (as checks' and rules' changes are). */
export const NOTICE_EVERY = 100;
/** The checks (slugs job-1 to job-5) and alert rules (ids 1 to 5) the notices are of: a tenth of them each. */
export const NOTICE_THINGS = 5;

/** The `n`th notice (0, 1, ...): whose it is, and a change to down or back up, by turns for each. */
export function notice(n: number): { event: string; tags: Record<string, string> } {
  const thing = n % (2 * NOTICE_THINGS);
  const down = Math.floor(n / (2 * NOTICE_THINGS)) % 2 === 0;
  if (thing < NOTICE_THINGS) {
    const slug = `job-${thing + 1}`;
    return { event: `${slug} is ${down ? "down" : "up"}`, tags: { check: slug, state: down ? "down" : "up" } };
  }
  const id = String(thing - NOTICE_THINGS + 1);
  return {
    event: `Rule ${id} is ${down ? "firing" : "resolved"}`,
    tags: { alert: id, state: down ? "firing" : "resolved" },
  };
}

export const BENCH_OWNER = { username: "bench", password: "bench password 1" };

/** Signs BENCH_OWNER in to the server at `url` through the login form; returns the session cookie. */
export async function benchSession(url: string): Promise<string> {
  const page = await fetch(`${url}/login`);
  const formCookie = page.headers.getSetCookie()[0]!.split(";")[0]!;
  const form = /name="_form" value="([^"]+)"/.exec(await page.text())![1]!;
  const res = await fetch(`${url}/login`, {
    method: "POST",
    redirect: "manual",
    headers: { Cookie: formCookie, "Content-Type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ _form: form, ...BENCH_OWNER, next: "/" }),
  });
  return res.headers
    .getSetCookie()
    .find((c) => c.startsWith("sb_session="))!
    .split(";")[0]!;
}

let summarySeconds = 0;

/** The data set in a new data directory: `seconds` in all, `summarySeconds` of them building its summaries. */
export async function seed(dataDir: string, count: number): Promise<{ seconds: number; summarySeconds: number }> {
  const store = openSqliteStore(join(dataDir, "signalboard.db"), { sync: "normal" });
  const started = performance.now();
  const project = (await store.projects.create("bench")) ?? (await store.projects.findByName("bench"))!;
  // Its summaries are built once all its events are in, as after an upgrade (steps far larger than
  // the server's, which share the writer with requests): faster than keeping them event by event.
  store.sqlite.query("INSERT OR REPLACE INTO summary_builds (project_id, through) VALUES (?, -1)").run(project.id);
  const channels: { name: string; id: number }[] = [];
  for (const name of ["big", "payments", "signups", "deploys"])
    channels.push({ name, id: (await store.projects.ensureChannel(project.id, name, Date.now())).id });
  const alerts = await store.projects.ensureChannel(project.id, "alerts", Date.now());
  const plans = ["free", "pro", "team", "enterprise"];
  const now = Date.now();
  const span = 60 * 86_400_000;
  const batch = (from: number, to: number) =>
    store.tx(async (tx) => {
      for (let i = from; i < to; i++) {
        // 85% of events in "big", so its feed is the million-event case.
        const channel = i % 20 < 17 ? channels[0]! : channels[1 + (i % 3)]!;
        await tx.events.insert({
          projectId: project.id,
          project: "bench",
          channelId: channel.id,
          channel: channel.name,
          name: EVENT_NAMES[i % 7]!,
          description: `Request ${i} from host web-${i % 13} took ${i % 500} ms`,
          icon: "📈",
          notify: false,
          parser: "text",
          userId: `user-${i % BENCH_USERS}`,
          tags: { plan: plans[i % 4]!, region: i % 2 ? "eu" : "us", build: i % 100 },
          ts: now - span + Math.floor((i / count) * span),
          receivedAt: now,
          historical: true,
        });
        // Besides the events, now and then a check's or a rule's notice: what a status page reads.
        if (i % NOTICE_EVERY === 0) {
          const n = notice(i / NOTICE_EVERY);
          await tx.events.insert({
            projectId: project.id,
            project: "bench",
            channelId: alerts.id,
            channel: "alerts",
            name: n.event,
            description: "",
            icon: "🚨",
            notify: false,
            parser: "text",
            userId: null,
            tags: n.tags,
            ts: now - span + Math.floor((i / count) * span),
            receivedAt: now,
            historical: true,
          });
        }
      }
    });
  for (let i = 0; i < count; i += 10_000) await batch(i, Math.min(count, i + 10_000));
  const building = performance.now();
  while (await store.events.buildSummaries(50_000));
  summarySeconds = (performance.now() - building) / 1000;
  prepareSearch(store.sqlite, store.path);
  const indexer = openIndexerConnection(store.path);
  const { indexPending } = searchIndexer(indexer);
  while (indexPending(100_000) > 0);
  indexer.close();
  await accountService(store, { sessionTtlMs: 86_400_000 })
    .createUser(BENCH_OWNER, "owner")
    .catch(() => {});
  await store.close();
  return { seconds: (performance.now() - started) / 1000, summarySeconds };
}

if (import.meta.main) {
  const [dir, n] = process.argv.slice(2);
  console.log(await seed(dir!, Number(n ?? 1_000_000)));
}
