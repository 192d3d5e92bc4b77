// The feed's filters as the server reads them from the URL: dates that are not dates (or a range
// that ends before it starts) make the page answer 422 with the error by its field, while the
// search runs without that date; the feed's next pages and its live stream take the same URLs
// and do not break on them.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { type Agent, openSse, post, signedIn, startTestServer, type TestServer } from "../helpers.ts";

const OWNER = { username: "owner", password: "correct horse battery staple" };

describe("date filters", () => {
  let server: TestServer;
  let agent: Agent;
  const day = (iso: string) => Date.parse(`${iso}T12:00:00Z`) / 1000;
  beforeAll(async () => {
    server = await startTestServer();
    await server.services.accounts.createUser(OWNER, "owner");
    agent = await signedIn(server, OWNER);
    for (const [event, at] of [
      ["January 5", "2026-01-05"],
      ["January 10", "2026-01-10"],
      ["January 20", "2026-01-20"],
    ] as const) {
      expect(
        (await post(server, "/v1/log", { project: "default", channel: "days", event, timestamp: day(at) })).status,
      ).toBe(200);
    }
  });
  afterAll(() => server.close());

  const names = (html: string) => [...html.matchAll(/class="event-name"[^>]*>([^<]+)</g)].map((m) => m[1]);
  async function page(search: string) {
    const res = await agent.request(`/p/default${search}`);
    return { status: res.status, html: await res.text() };
  }

  test("valid days and ISO date-times filter, and answer 200", async () => {
    const days = await page("?from=2026-01-06&to=2026-01-10");
    expect(days.status).toBe(200);
    expect(names(days.html)).toEqual(["January 10"]);
    expect(days.html).not.toContain("filter-errors");
    const times = await page(
      `?from=${encodeURIComponent("2026-01-10T11:00:00Z")}&to=${encodeURIComponent("2026-01-10T13:00Z")}`,
    );
    expect(times.status).toBe(200);
    expect(names(times.html)).toEqual(["January 10"]);
    const same = await page("?from=2026-01-10&to=2026-01-10"); // one whole day
    expect(same.status).toBe(200);
    expect(names(same.html)).toEqual(["January 10"]);
  });

  test("a date that is not one is a 422 with the error by its field; the search runs without it", async () => {
    for (const bad of ["2024-13-45", "2026-02-30", "hello 1", "2026-1-5", "yesterday"]) {
      const res = await page(`?from=${encodeURIComponent(bad)}&channel=days`);
      expect({ bad, status: res.status }).toEqual({ bad, status: 422 });
      expect(res.html).toContain('id="filter-errors"');
      // A date field cannot hold what was sent: a text field keeps it in view as typed.
      expect(res.html).toContain(
        `<input type="text" pattern="\\d{4}-\\d{2}-\\d{2}.*" placeholder="YYYY-MM-DD" id="filter-from" name="from" value="${bad}" aria-invalid="true" aria-describedby="filter-from-error">`,
      );
      expect(res.html).toContain(
        `<p class="hint error" id="filter-from-error">“${bad}” is not a date: use YYYY-MM-DD.</p>`,
      );
      expect(names(res.html)).toEqual(["January 20", "January 10", "January 5"]);
    }
    const to = await page("?to=2026-13-01");
    expect(to.status).toBe(422);
    expect(to.html).toContain('id="filter-to-error"');
  });

  test("a range that ends before it starts: the error is at To, From still applies", async () => {
    const res = await page("?from=2026-01-10&to=2026-01-05");
    expect(res.status).toBe(422);
    expect(res.html).toContain(
      `<p class="hint error" id="filter-to-error">“To” (2026-01-05) is before “From” (2026-01-10).</p>`,
    );
    expect(res.html).not.toContain('id="filter-from-error"');
    expect(names(res.html)).toEqual(["January 20", "January 10"]);
    // The day before From is before it too (its end is From's start).
    const adjacent = await page("?from=2026-01-10&to=2026-01-09");
    expect(adjacent.status).toBe(422);
    expect(adjacent.html).toContain("“To” (2026-01-09) is before “From” (2026-01-10).");
  });

  test("the page's feed and live URLs leave the bad date out; feed, live and activity answer with it anyway", async () => {
    const res = await page("?from=2024-13-45&q=January");
    const live = /data-live-url="([^"]+)"/.exec(res.html)![1]!.replaceAll("&amp;", "&");
    expect(live).not.toContain("from=");
    expect(live).toContain("q=January");

    const feed = await agent.request("/p/default/feed?from=2024-13-45&to=nonsense");
    expect(feed.status).toBe(200);
    expect(names(await feed.text())).toEqual(["January 20", "January 10", "January 5"]);

    const activity = await agent.request("/p/default/activity.json?days=7&from=2024-13-45");
    expect(activity.status).toBe(200);

    const stream = await openSse(`${server.url}/p/default/live?from=2024-13-45&to=nonsense&q=March`, {
      Cookie: agent.cookieHeader(),
    });
    try {
      expect(stream.response.status).toBe(200);
      expect((await post(server, "/v1/log", { project: "default", channel: "days", event: "March live" })).status).toBe(
        200,
      );
      const [frame] = await stream.waitFor(1);
      expect(frame!.event).toBe("feed");
      expect(frame!.data).toContain("March live"); // both bad dates are ignored
    } finally {
      stream.close();
    }
  });

  test("the channel page answers the same way", async () => {
    const bad = await agent.request("/p/default/c/days?from=2024-13-45");
    expect(bad.status).toBe(422);
    expect(await bad.text()).toContain('id="filter-from-error"');
    expect((await agent.request("/p/default/c/days?from=2026-01-01")).status).toBe(200);
  });
});
