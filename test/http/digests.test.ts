// Digests with a controllable clock: the runner is called with the time it would see. A daily
// digest reports the period's events per channel against the period before, the top events, the
// alerts that fired, and goes once per period: asked again, after a restart, by two runs at once,
// and (on PostgreSQL) by two instances at once, it is sent once.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createDatabase } from "../pg-cluster.ts";
import { found, notifierIdle, peek, POSTGRES, post, startTestApp, type TestApp } from "../helpers.ts";
import { type Receiver, startReceiver } from "../receiver.ts";
import { type SmtpSink, startSmtpSink } from "../smtp-sink.ts";

const DAY = 86_400_000;
const HOUR = 3_600_000;
/** Three days ago at 00:00 UTC: the days of the test are in the past, where events may be timestamped. */
const BASE = Math.floor(Date.now() / DAY) * DAY - 3 * DAY;
const dateOf = (ms: number) => new Date(ms).toISOString().slice(0, 10);

let smtp: SmtpSink;
let hook: Receiver;
beforeAll(async () => {
  smtp = await startSmtpSink();
  hook = await startReceiver();
});
afterAll(async () => {
  await smtp.stop();
  hook.stop();
});

const settings = () => ({
  "smtp-url": smtp.url,
  "outbound-allow": "127.0.0.1", // where the SMTP sink listens
  "base-url": "https://sb.example.com",
  "notify-retry-base": "100ms",
});

async function seed(server: TestApp, project: string): Promise<void> {
  const at = (ms: number) => ms / 1000;
  const events = [
    { channel: "payments", event: "Paid", timestamp: at(BASE + 20 * HOUR) }, // the period before
    { channel: "payments", event: "Paid", timestamp: at(BASE + DAY + 10 * HOUR) },
    { channel: "payments", event: "Paid", timestamp: at(BASE + DAY + 11 * HOUR) },
    { channel: "payments", event: "Refund <b>x</b>", timestamp: at(BASE + DAY + 12 * HOUR) },
    {
      channel: "alerts",
      event: "CPU high",
      tags: { alert: "cpu", state: "firing", kind: "threshold" },
      timestamp: at(BASE + DAY + 13 * HOUR),
    },
    {
      channel: "alerts",
      event: "CPU ok",
      tags: { alert: "cpu", state: "resolved", kind: "threshold" },
      timestamp: at(BASE + DAY + 14 * HOUR),
    },
  ];
  for (const e of events) expect((await post(server, "/v1/log", { project, ...e })).status).toBe(200);
  await post(server, "/v1/insight", { project, title: "Active users", value: 42 });
}

describe("a daily digest", () => {
  let server: TestApp;
  const dataDir = { path: "" };
  let digestId = 0;
  beforeAll(async () => {
    server = await startTestApp(settings());
    dataDir.path = server.dataDir;
    await server.services.projects.create("shop");
    await seed(server, "shop");
  });
  afterAll(() => server.close());

  test("is checked when made: a time zone, at least one recipient, the project's own integrations", async () => {
    const bad: [Record<string, unknown>, string][] = [
      [{ time_zone: "Mars/Olympus" }, "time_zone"],
      [{ emails: [] }, "emails"],
      [{ hour: 24 }, "hour"],
      [{ emails: ["nope"] }, "emails.0"],
      [{ integrations: [999] }, "integrations"],
    ];
    for (const [change, path] of bad) {
      const input = {
        project: "shop",
        frequency: "daily",
        hour: 9,
        time_zone: "UTC",
        emails: ["team@example.com"],
        ...change,
      };
      await expect(server.services.digests.create(input)).rejects.toMatchObject({ details: { issues: [{ path }] } });
    }
  });

  test("goes at its hour with the period's numbers, to e-mail and to an integration, once", async () => {
    const { integration } = await server.services.integrations.create({
      project: "shop",
      kind: "webhook",
      name: "digest hook",
      config: { url: `${hook.url}/digest` },
      filter: { channels: ["nothing"] },
    });
    // Made on day 1 at noon: the period that ended at 09:00 that day is not sent; the next one is.
    const digest = await server.services.digests.create(
      {
        project: "shop",
        frequency: "daily",
        hour: 9,
        time_zone: "UTC",
        emails: ["team@example.com"],
        integrations: [integration.id],
      },
      BASE + DAY + 12 * HOUR,
    );
    digestId = digest.id;
    expect(digest.lastPeriod).toBe(dateOf(BASE + DAY));
    expect(await server.services.runDigests(BASE + 2 * DAY + 8 * HOUR)).toBe(0); // not yet due
    expect(await server.services.runDigests(BASE + 2 * DAY + 9 * HOUR + 60_000)).toBe(1);
    expect(await server.services.runDigests(BASE + 2 * DAY + 9 * HOUR + 120_000)).toBe(0);

    const key = dateOf(BASE + 2 * DAY);
    const mail = await found(() => smtp.mails.find((m) => m.parsed.subject === `shop: daily digest, ${key}`));
    expect(mail.to).toEqual(["team@example.com"]);
    const text = mail.parsed.text!;
    expect(text).toContain("5 events (▲ 400% from 1)");
    expect(text).toContain("#payments: 3 (▲ 200% from 1)");
    expect(text).toContain("#alerts: 2 (none the period before)");
    expect(text).toMatch(/1\. Paid: 2/);
    expect(text).toContain("Refund <b>x</b>: 1");
    expect(text).toContain("Active users: 42");
    expect(text).toContain("Alerts fired: 1");
    expect(text).toContain("https://sb.example.com/p/shop");
    expect(String(mail.parsed.html)).toContain("Refund &lt;b&gt;x&lt;/b&gt;");
    expect(String(mail.parsed.html)).not.toContain("<b>x</b>");
    // The integration gets it whatever its routing says (routing is for events).
    const hit = await found(() => hook.requests.find((r) => r.path === "/digest"));
    const body = JSON.parse(hit.body);
    expect(body).toMatchObject({
      type: "digest",
      title: `shop: daily digest, ${key}`,
      url: "https://sb.example.com/p/shop",
    });
    expect(body.body).toContain("Alerts fired: 1");
    await notifierIdle(server);
    const [shown] = await server.services.digests.list("shop");
    expect(shown!.lastSuccessAt).toBeGreaterThan(0);
  });

  test("two runs at once send a period once; a restart does not send it again", async () => {
    const due = BASE + 3 * DAY + 9 * HOUR + 60_000;
    const sent = await Promise.all([
      server.services.runDigests(due),
      server.services.runDigests(due),
      server.services.digests.runDue(due),
    ]);
    expect(sent.reduce((a, b) => a + b, 0)).toBe(1);
    await server.stop();
    server = await startTestApp(settings(), dataDir.path);
    expect(await server.services.runDigests(due)).toBe(0);
    const rows = await peek<{ n: number | string }>(
      server,
      "SELECT count(*) AS n FROM deliveries WHERE target = 'digest' AND target_id = ?",
      digestId,
    );
    expect(Number(rows[0]!.n)).toBe(2);
  });
});

describe.skipIf(!POSTGRES)("on PostgreSQL, two instances", () => {
  let a: TestApp;
  let b: TestApp;
  beforeAll(async () => {
    const url = await createDatabase(POSTGRES!);
    [a, b] = await Promise.all([
      startTestApp({ ...settings(), "database-url": url }),
      startTestApp({ ...settings(), "database-url": url }),
    ]);
  });
  afterAll(async () => {
    await Promise.all([a?.close(), b?.close()]);
  });

  test("running the digests at once send each period once", async () => {
    await a.services.projects.create("both");
    const digest = await a.services.digests.create(
      { project: "both", frequency: "daily", hour: 9, time_zone: "UTC", emails: ["both@example.com"] },
      BASE + 12 * HOUR,
    );
    for (const day of [1, 2]) {
      const due = BASE + day * DAY + 9 * HOUR + 60_000;
      const sent = await Promise.all([
        a.services.runDigests(due),
        b.services.runDigests(due),
        a.services.digests.runDue(due),
        b.services.digests.runDue(due),
      ]);
      expect(sent.reduce((x, y) => x + y, 0)).toBe(1);
    }
    const rows = await peek<{ n: number | string }>(
      a,
      "SELECT count(*) AS n FROM deliveries WHERE target = 'digest' AND target_id = ?",
      digest.id,
    );
    expect(Number(rows[0]!.n)).toBe(2);
  });
});
