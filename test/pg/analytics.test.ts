// Charts on PostgreSQL asked again and again, as a dashboard's cards and alert rules ask them:
// from its sixth run a statement may run on a generic plan, which cannot see how common a word
// is. A series by a word most events hold was then matched through the search index in every
// bucket, and ran out of the read budget every time after the fifth.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { seedPostgres } from "../bench/postgres.ts";
import { PROGRAM } from "../e2e/process.ts";
import { startTestServer, type TestServer } from "../helpers.ts";
import { createDatabase, dropDatabase } from "../pg-cluster.ts";

const CLUSTER = process.env.SIGNALBOARD_TEST_POSTGRES;
const EVENTS = 60_000;

describe.skipIf(!CLUSTER)("a chart asked again and again on PostgreSQL", () => {
  let url: string;
  let server: TestServer;

  beforeAll(async () => {
    url = await createDatabase(CLUSTER!);
    await seedPostgres(PROGRAM, url, EVENTS); // 60 days of events, each one's description saying it "took" so long
    server = await startTestServer({ "database-url": url, "query-timeout": "1s" });
  });

  afterAll(async () => {
    await server?.close();
    await dropDatabase(CLUSTER!, url);
  });

  test("a series by a word most events hold is answered every time, with the same counts", async () => {
    const now = Math.floor(Date.now() / 1000);
    const ask = () =>
      fetch(
        `${server.url}/v1/analytics/series?project=bench&from=${now - 30 * 86_400}&to=${now}&q=took&interval=hour`,
        {
          headers: { Authorization: `Bearer ${server.token}` },
        },
      );
    const answers: { status: number; total: number | null }[] = [];
    for (let i = 0; i < 8; i++) {
      const res = await ask();
      const body = (await res.json()) as { series?: { total: number }[] };
      answers.push({ status: res.status, total: body.series?.[0]?.total ?? null });
    }
    const first = answers[0]!;
    expect(first.status).toBe(200);
    expect(first.total).toBeGreaterThan(EVENTS / 3);
    expect(answers).toEqual(Array(8).fill(first));
  });
});
