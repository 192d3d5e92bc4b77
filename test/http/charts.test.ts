// Saved charts and funnels (/v1/charts): made, listed (the pinned ones first, by position), read,
// changed, arranged and deleted; their data is what the analytics routes answer for the same
// question; and a question that could not be answered is refused when it is saved.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { call, post, type TestApp, startTestApp } from "../helpers.ts";

const DAY = 86_400;
let server: TestApp;
const now = Math.floor(Date.now() / 1000);

beforeAll(async () => {
  server = await startTestApp();
  await server.services.projects.create("shop");
  for (let i = 0; i < 40; i++) {
    const res = await post(server, "/v1/log", {
      project: "shop",
      channel: i % 3 ? "web" : "app",
      event: i % 4 ? "Page viewed" : "Signed up",
      user_id: `u${i % 7}`,
      tags: { plan: i % 2 ? "pro" : "free" },
      timestamp: now - i * 7200,
    });
    expect(res.status).toBe(200);
  }
  await post(server, "/send-metric", { project: "shop", title: "Queue", value: 3 });
});
afterAll(() => server.close());

const create = (body: Record<string, unknown>) =>
  call(server, { path: "/v1/charts", body: { project: "shop", ...body } });

describe("saved charts", () => {
  test("are made, listed (pinned first, by position), read, changed and deleted", async () => {
    const a = await create({
      kind: "series",
      name: "Views by plan",
      definition: { event: "Page viewed", group_by: "tag:plan", last_days: 7, display: "bar" },
    });
    expect(a.status).toBe(200);
    expect(a.json.chart).toMatchObject({
      project: "shop",
      kind: "series",
      name: "Views by plan",
      definition: { event: "Page viewed", group_by: "tag:plan", last_days: 7, display: "bar" },
      position: null,
    });
    const b = (
      await create({
        kind: "funnel",
        name: "Sign-up to view",
        definition: { steps: ["Signed up", { event: "Page viewed", channel: "web" }], window: 3 * DAY, last_days: 5 },
        position: 1,
      })
    ).json.chart;
    const c = (
      await create({ kind: "metric", name: "Queue", definition: { title: "Queue", last_days: 1 }, position: 0 })
    ).json.chart;
    const ids = async () =>
      (await call(server, { path: "/v1/charts?project=shop" })).json.charts.map((x: { id: number }) => x.id);
    expect(await ids()).toEqual([c.id, b.id, a.json.chart.id]);

    const renamed = await call(server, {
      method: "PATCH",
      path: `/v1/charts/${c.id}`,
      body: { name: "Queue depth", position: null },
    });
    expect(renamed.json.chart).toMatchObject({
      id: c.id,
      name: "Queue depth",
      position: null,
      definition: { title: "Queue", last_days: 1 },
    });
    expect(await ids()).toEqual([b.id, a.json.chart.id, c.id]);
    expect((await call(server, { path: `/v1/charts/${b.id}` })).json.chart).toMatchObject({
      id: b.id,
      kind: "funnel",
      position: 1,
    });

    // The dashboard arranges them: the ones given in that order, the rest unpinned.
    await server.services.charts.arrange("shop", [a.json.chart.id, c.id]);
    const listed = (await call(server, { path: "/v1/charts?project=shop" })).json.charts;
    expect(listed.map((x: { id: number; position: number | null }) => [x.id, x.position])).toEqual([
      [a.json.chart.id, 0],
      [c.id, 1],
      [b.id, null],
    ]);

    for (const chart of [a.json.chart, b, c])
      expect((await call(server, { method: "DELETE", path: `/v1/charts/${chart.id}` })).status).toBe(200);
    expect(await ids()).toEqual([]);
    expect((await call(server, { path: `/v1/charts/${b.id}` })).status).toBe(404);
    expect((await call(server, { method: "DELETE", path: `/v1/charts/${b.id}` })).status).toBe(404);
  });

  test("each says its place among all the dashboard's cards, as the list does", async () => {
    await server.services.projects.create("cards");
    const made = [];
    for (const name of ["One", "Two", "Three"])
      made.push(
        (await create({ project: "cards", kind: "series", name, definition: { last_days: 7 }, position: 1000 })).json
          .chart,
      );
    // A new project's dashboard is the activity card; each chart pinned at the end comes after it.
    const first = 1;
    expect(made.map((c) => c.position)).toEqual([first, first + 1, first + 2]);
    const listed = (await call(server, { path: "/v1/charts?project=cards" })).json.charts;
    for (const chart of made) {
      const position = listed.find((c: { id: number }) => c.id === chart.id).position;
      expect((await call(server, { path: `/v1/charts/${chart.id}` })).json.chart.position).toBe(position);
    }
    const moved = await call(server, { method: "PATCH", path: `/v1/charts/${made[2].id}`, body: { position: 0 } });
    expect(moved.json.chart.position).toBe(0);
    expect((await call(server, { path: `/v1/charts/${made[0].id}` })).json.chart.position).toBe(first + 1);
    expect(
      (await call(server, { method: "PATCH", path: `/v1/charts/${made[1].id}`, body: { name: "Two b" } })).json.chart
        .position,
    ).toBe(first + 2);
    for (const chart of made)
      expect((await call(server, { method: "DELETE", path: `/v1/charts/${chart.id}` })).status).toBe(200);
  });

  test("answer what the analytics routes answer for the same question", async () => {
    const series = (
      await create({
        kind: "series",
        name: "Users a day",
        definition: { measure: "users", tz: "Europe/Paris", from: now - 3 * DAY, to: now, tag: ["plan:pro"] },
      })
    ).json.chart;
    const data = await call(server, { path: `/v1/charts/${series.id}/data` });
    const direct = await call(server, {
      path: `/v1/analytics/series?project=shop&measure=users&tz=Europe/Paris&from=${now - 3 * DAY}&to=${now}&tag=plan:pro`,
    });
    const { success, statusCode, ...answer } = direct.json;
    expect(data.json).toEqual({ success, statusCode, chart: series, kind: "series", ...answer });
    expect(answer.series[0].total).toBeGreaterThan(0);

    const funnel = (
      await create({
        kind: "funnel",
        name: "F",
        definition: { steps: ["Signed up", "Page viewed"], from: now - 3 * DAY, to: now, window: DAY },
      })
    ).json.chart;
    const direct2 = (
      await call(server, {
        path: `/v1/analytics/funnel?project=shop&step=Signed%20up&step=Page%20viewed&from=${now - 3 * DAY}&to=${now}&window=${DAY}`,
      })
    ).json;
    const { success: _, statusCode: __, ...funnelAnswer } = direct2;
    expect((await call(server, { path: `/v1/charts/${funnel.id}/data` })).json).toMatchObject({
      kind: "funnel",
      ...funnelAnswer,
    });
    expect(funnelAnswer.steps[1].users).toBeGreaterThan(0);

    const metric = (await create({ kind: "metric", name: "Q", definition: { title: "Queue", last_days: 1 } })).json
      .chart;
    const points = (await call(server, { path: `/v1/charts/${metric.id}/data` })).json;
    expect(points).toMatchObject({ kind: "metric", metric: { title: "Queue", value: 3 } });
    expect(points.points.map((p: { value: number }) => p.value)).toEqual([3]);
  });

  test("a question that could not be answered is refused when it is saved, naming its field", async () => {
    const refusals: [Record<string, unknown>, number, string | null][] = [
      [{ kind: "pie", name: "x", definition: {} }, 400, "kind"],
      [{ kind: "series", name: "", definition: {} }, 400, "name"],
      [{ kind: "series", name: "x", definition: { interval: "year" } }, 400, "definition.interval"],
      [{ kind: "series", name: "x", definition: { group_by: "colour" } }, 400, "definition.group_by"],
      [{ kind: "series", name: "x", definition: { colour: "red" } }, 400, "definition"],
      [{ kind: "series", name: "x", definition: { last_days: 3, from: now } }, 400, "definition.last_days"],
      [{ kind: "series", name: "x", definition: { interval: "hour", last_days: 3000 } }, 400, "definition.interval"],
      [{ kind: "series", name: "x", definition: {}, position: -1 }, 400, "position"],
      [{ kind: "funnel", name: "x", definition: { steps: ["A"] } }, 400, "definition.step"],
      [{ kind: "funnel", name: "x", definition: { steps: ["A", { event: "B", channel: "nope" }] } }, 404, null],
      [{ kind: "metric", name: "x", definition: { title: "Nope" } }, 404, null],
      [{ kind: "series", name: "x", definition: { channel: "nope" }, project: "nope" }, 404, null],
      // What GET /v1/analytics/series refuses for the same question is refused when it is saved,
      // not saved to answer 400 or 404 on every read of its card.
      [{ kind: "series", name: "x", definition: { channel: "nope" } }, 404, null],
      [{ kind: "series", name: "x", definition: { tag: ["plan"] } }, 400, "definition.tag.0"],
      [{ kind: "series", name: "x", definition: { tag: ["plan:pro", "Plan:pro"] } }, 400, "definition.tag.1"],
      [
        { kind: "funnel", name: "x", definition: { steps: ["A", { event: "B", tag: [":pro"] }] } },
        400,
        "definition.steps.1.tag.0",
      ],
    ];
    const before = (await call(server, { path: "/v1/charts?project=shop" })).json.charts.length;
    for (const [body, status, field] of refusals) {
      const res = await create(body);
      expect({ body, status: res.status, field: res.json.validation?.body?.[0]?.path ?? null }).toEqual({
        body,
        status,
        field,
      });
    }
    expect((await call(server, { path: "/v1/charts?project=shop" })).json.charts.length).toBe(before);
    expect(
      (await call(server, { method: "PATCH", path: "/v1/charts/abc", body: {} })).json.validation.query[0].path,
    ).toBe("id");
    expect((await call(server, { method: "PATCH", path: "/v1/charts/999", body: { name: "y" } })).status).toBe(404);
    const saved = (await create({ kind: "series", name: "ok", definition: {} })).json.chart;
    const res = await call(server, {
      method: "PATCH",
      path: `/v1/charts/${saved.id}`,
      body: { definition: { measure: "people" } },
    });
    expect(res.json.validation.body[0].path).toBe("definition.measure");
  });
});

describe("a kind of chart that is none", () => {
  test("is a 400 naming kind, whatever the word (an object's own names included), and nothing is saved", async () => {
    const before = (await call(server, { path: "/v1/charts?project=shop" })).json.charts.length;
    for (const kind of ["zzz", "__proto__", "constructor", "toString", "", 3, null]) {
      const res = await create({
        kind,
        name: `Kind ${String(kind)}`,
        definition: { event: "Signed up", last_days: 7 },
      });
      expect({ kind, status: res.status }).toEqual({ kind, status: 400 });
      expect(res.json.validation.body).toEqual([
        expect.objectContaining({ path: "kind", message: "kind: must be series, funnel, metric or retention" }),
      ]);
    }
    expect((await call(server, { path: "/v1/charts?project=shop" })).json.charts.length).toBe(before);
  });
});

describe("a full dashboard", () => {
  test(`holds ${50} cards, and says so rather than taking one off for another`, async () => {
    await server.services.projects.create("full");
    // The activity card and 49 charts fill it.
    for (let i = 0; i < 49; i++) {
      const res = await call(server, {
        path: "/v1/charts",
        body: { project: "full", kind: "series", name: `c${i}`, definition: {}, position: 1000 },
      });
      expect(res.status).toBe(200);
    }
    const listed = (await call(server, { path: "/v1/charts?project=full" })).json.charts as {
      id: number;
      position: number | null;
    }[];
    expect(listed.filter((c) => c.position !== null)).toHaveLength(49);
    // One more unpinned is fine; pinned, it is refused (and not saved: it is made and placed at once).
    expect(
      (
        await call(server, {
          path: "/v1/charts",
          body: { project: "full", kind: "series", name: "kept off", definition: {} },
        })
      ).status,
    ).toBe(200);
    const refused = await call(server, {
      path: "/v1/charts",
      body: { project: "full", kind: "series", name: "one more", definition: {}, position: 0 },
    });
    expect(refused.status).toBe(400);
    expect(refused.json.validation.body[0].path).toBe("position");
    expect(refused.json.message).toContain("at most 50 cards");
    const after = (await call(server, { path: "/v1/charts?project=full" })).json.charts as {
      name: string;
      position: number | null;
    }[];
    expect(after.filter((c) => c.position !== null)).toHaveLength(49);
    expect(after.some((c) => c.name === "one more")).toBe(false);
    const keptOff = after.find((c) => c.name === "kept off") as unknown as { id: number };
    const pin = await call(server, { method: "PATCH", path: `/v1/charts/${keptOff.id}`, body: { position: 3 } });
    expect(pin.status).toBe(400);
    expect(pin.json.message).toContain("at most 50 cards");
  });
});
