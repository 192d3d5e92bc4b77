// A saved chart looks as the rest of the dashboard does: its x-axis says its buckets as the
// builder's preview does (dates for a chart by day, week or month, however wide it is drawn), and
// a channel (or a tag's value) has one colour on every chart and legend of a page, light and dark.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { existsSync } from "node:fs";
import type { Browser, Page } from "playwright-core";
import type { TestServer } from "../helpers.ts";
import { CHROMIUM, describeBrowser, launch, ok, sendEvent, serverPool, signIn, withPage } from "./browser.ts";

let browser: Browser;
beforeAll(async () => {
  if (existsSync(CHROMIUM)) browser = await launch();
});
afterAll(async () => {
  await browser?.close();
});

const DAY = 86_400;

/** Events in a few channels on each of the last `days` days (one more each day in "payments"). */
async function seedDays(server: TestServer, days: number, channels = ["payments", "signups", "deploys"]) {
  const now = Math.floor(Date.now() / 1000);
  for (let d = 0; d < days; d++)
    for (const [i, channel] of channels.entries())
      for (let n = 0; n <= (i === 0 ? d : 0); n++)
        await ok(
          sendEvent(server, {
            project: "default",
            channel,
            event: "Happened",
            tags: { plan: n % 2 ? "pro" : "free" },
            timestamp: now - d * DAY - 60,
          }),
        );
}

/**
 * The x-axis labels drawn by the series chart in `scope`, and each of its buckets' dates as the
 * pages write a day ("Nov 27"), a week (its Monday) or a month ("Nov 2026"), in the chart's zone.
 */
async function axisOf(page: Page, scope: string): Promise<{ labels: string[]; buckets: string[]; interval: string }> {
  const chart = page.locator(`${scope} [data-testid=series]`);
  await page.waitForFunction(
    (s) => (document.querySelector(`${s} [data-testid=series] .chart`) as HTMLElement | null)?.dataset.xLabels,
    scope,
  );
  return chart.evaluate((el) => {
    const data = JSON.parse((el as HTMLElement).dataset.chart!) as { t: number[]; tz: string; interval: string };
    const month = data.interval === "month";
    const buckets = data.t.map((t) =>
      data.interval === "hour"
        ? new Date(t * 1000).toLocaleTimeString(undefined, { hour: "numeric" }) // an hour: in the viewer's zone
        : new Date(t * 1000).toLocaleDateString(undefined, {
            timeZone: data.tz,
            month: "short",
            ...(month ? { year: "numeric" } : { day: "numeric" }),
          }),
    );
    // An hour's label has its day below it where the day changes: its first line names the hour.
    const labels = (JSON.parse((el.querySelector(".chart") as HTMLElement).dataset.xLabels!) as string[]).map(
      (label) => label.split("\n")[0]!,
    );
    return { labels, buckets, interval: data.interval };
  });
}

/** Each legend entry's name and its swatch's colour, of the chart in `scope`, once drawn. */
async function legendColours(page: Page, scope: string): Promise<Record<string, string>> {
  await page.waitForFunction(
    (s) =>
      [...document.querySelectorAll(`${s} .chart-legend li .swatch`)].some(
        (mark) => (mark as HTMLElement).style.background !== "",
      ),
    scope,
  );
  return page.$$eval(`${scope} .chart-legend li`, (items) =>
    Object.fromEntries(
      items.map((li) => [
        li.querySelector(".legend-name")!.textContent!,
        getComputedStyle(li.querySelector(".swatch")!).backgroundColor,
      ]),
    ),
  );
}

describeBrowser("saved charts", () => {
  const pool = serverPool({ "card-refresh": "500ms" });
  afterAll(() => pool.closeAll());

  test("a chart by day says dates on its page, its card and the builder's preview, however wide; by hour, week and month too", async () => {
    const server = await pool.withOwner();
    await seedDays(server, 7);
    const byDay = await server.services.charts.create({
      project: "default",
      kind: "series",
      name: "Daily",
      definition: { last_days: 7, interval: "day" },
      position: 1,
    });
    const byWeek = await server.services.charts.create({
      project: "default",
      kind: "series",
      name: "Weekly",
      definition: { last_days: 90, interval: "week", display: "bar" },
    });
    const byHour = await server.services.charts.create({
      project: "default",
      kind: "series",
      name: "Hourly",
      definition: { last_days: 1, interval: "hour" },
    });
    const byMonth = await server.services.charts.create({
      project: "default",
      kind: "series",
      name: "Monthly",
      definition: { last_days: 365, interval: "month" },
    });
    // A zone behind the chart's (UTC): a day's label is its bucket's date, not the viewer's midnight.
    for (const width of [1280, 800])
      await withPage(
        browser,
        `saved-chart-labels-${width}`,
        async (page) => {
          await signIn(page, server);
          for (const [where, scope] of [
            [`/p/default/charts/${byDay.id}`, "main .chart-card"],
            [`/p/default/charts/${byDay.id}/edit`, "#chart-preview"],
            ["/p/default", `#card-${byDay.id}`],
            [`/p/default/charts/${byWeek.id}`, "main .chart-card"],
            [`/p/default/charts/${byWeek.id}/edit`, "#chart-preview"],
            [`/p/default/charts/${byMonth.id}`, "main .chart-card"],
            [`/p/default/charts/${byHour.id}`, "main .chart-card"],
            [`/p/default/charts/${byHour.id}/edit`, "#chart-preview"],
          ] as const) {
            await page.goto(server.url + where);
            const { labels, buckets, interval } = await axisOf(page, scope);
            expect(labels.length, where).toBeGreaterThan(0);
            // Every label is the date of a bucket, and the newest bucket is labelled.
            for (const label of labels) expect(buckets, `${where}: ${JSON.stringify(labels)}`).toContain(label);
            expect(labels.at(-1), where).toBe(buckets.at(-1));
            if (interval === "hour") continue;
            // The tooltip of the newest bucket names the day its label does.
            const plot = (await page.locator(`${scope} .u-over`).boundingBox())!;
            await page.mouse.move(plot.x + plot.width - 2, plot.y + plot.height / 2);
            await page.locator(`${scope} .chart-tip:not([hidden]) strong`).waitFor();
            expect(await page.locator(`${scope} .chart-tip strong`).textContent(), where).toContain(
              interval === "month" ? buckets.at(-1)!.split(" ")[0]! : buckets.at(-1)!,
            );
            // Seven days on the chart's page of a desktop: room for each.
            if (where === `/p/default/charts/${byDay.id}` && width >= 1280) expect(labels, where).toEqual(buckets);
          }
        },
        { viewport: { width, height: 900 }, timezoneId: "America/Los_Angeles" },
      );
  });
  test("a channel has one colour on the activity card, a chart split by channel and its page; a tag's value on every chart split by it; light and dark", async () => {
    const server = await pool.withOwner();
    await seedDays(server, 3);
    // Upgrades are mostly to pro: split by plan, pro comes first there and last on the whole project's chart.
    for (const plan of ["pro", "pro", "pro", "free"])
      await ok(sendEvent(server, { project: "default", channel: "upgrades", event: "Upgraded", tags: { plan } }));
    const split = (name: string, definition: Record<string, unknown>, position: number) =>
      server.services.charts.create({
        project: "default",
        kind: "series",
        name,
        definition: { last_days: 7, display: "bar", ...definition },
        position,
      });
    const byChannel = await split("By channel", { group_by: "channel" }, 1);
    const byPlan = await split("By plan", { group_by: "tag:plan" }, 2);
    const upgrades = await split("Upgrades by plan", { group_by: "tag:plan", channel: "upgrades" }, 3);
    const channels = ["#payments", "#signups", "#deploys", "#upgrades"];
    const pick = (colours: Record<string, string>, names: string[]) => names.map((n) => colours[n]);
    const seen: Record<string, string[]> = {};
    for (const colorScheme of ["light", "dark"] as const)
      await withPage(
        browser,
        `saved-chart-colours-${colorScheme}`,
        async (page) => {
          await signIn(page, server);
          await page.goto(`${server.url}/p/default`);
          const activity = await legendColours(page, "#card-activity");
          const split = await legendColours(page, `#card-${byChannel.id}`);
          expect(Object.keys(split).sort()).toEqual([...channels].sort());
          expect(pick(split, channels)).toEqual(pick(activity, channels));
          expect(new Set(pick(activity, channels)).size).toBe(channels.length);
          const plans = await legendColours(page, `#card-${byPlan.id}`);
          const upgraded = await legendColours(page, `#card-${upgrades.id}`);
          expect(Object.keys(upgraded)).toEqual(["pro", "free"]);
          expect(Object.keys(plans)).toEqual(["free", "pro"]);
          expect(pick(upgraded, ["free", "pro"])).toEqual(pick(plans, ["free", "pro"]));
          expect(plans.free).not.toBe(plans.pro);
          // The chart's own page says the same.
          await page.goto(`${server.url}/p/default/charts/${byChannel.id}`);
          expect(pick(await legendColours(page, "main .chart-card"), channels)).toEqual(pick(activity, channels));
          seen[colorScheme] = pick(activity, channels) as string[];
        },
        { colorScheme },
      );
    // Each theme has its own shades.
    expect(seen.light).not.toEqual(seen.dark);
  });
  test("the builder's address holds the question without its empty fields: a funnel's unused steps and a chart's blank filters are left out", async () => {
    const server = await pool.withOwner();
    await seedDays(server, 2);
    /** The address bar's fields, once it holds `until` (the preview's answer replaces it). */
    const fields = async (page: Page, until: (search: URLSearchParams) => boolean) => {
      await page.waitForURL((url) => until(url.searchParams));
      return [...new URL(page.url()).searchParams];
    };
    await withPage(browser, "builder-url", async (page, context) => {
      await signIn(page, server);
      await page.goto(`${server.url}/p/default/charts/new?kind=funnel`);
      await page.fill("#step-1", "Happened");
      await page.selectOption("#step-channel-1", "payments");
      await page.fill("#step-2", "Happened");
      await page.locator("#step-2").blur();
      const funnel = await fields(page, (q) => q.getAll("step").filter(Boolean).length === 2);
      expect(funnel.filter(([, v]) => v === "")).toEqual([]);
      expect(funnel.filter(([k]) => k.startsWith("step"))).toEqual([
        ["step", "Happened"],
        ["step", "Happened"],
        ["step_channel", "payments"],
      ]);
      // Opened elsewhere, it is the same funnel.
      const shared = await context.newPage();
      await shared.goto(page.url());
      expect(await shared.inputValue("#step-1")).toBe("Happened");
      expect(await shared.inputValue("#step-channel-1")).toBe("payments");
      expect(await shared.inputValue("#step-2")).toBe("Happened");
      expect(await shared.inputValue("#step-channel-2")).toBe("");
      expect(await shared.inputValue("#step-3")).toBe("");
      await shared.locator("[data-testid=funnel-step]").nth(1).waitFor();
      await shared.close();

      await page.goto(`${server.url}/p/default/charts/new`);
      await page.fill("#chart-event", "Happened");
      await page.locator("#chart-event").blur();
      const series = await fields(page, (q) => q.get("event") === "Happened");
      expect(series.filter(([, v]) => v === "")).toEqual([]);
    });
  });
});
