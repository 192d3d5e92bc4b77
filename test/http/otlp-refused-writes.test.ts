// An export whose writes are refused by the store's own checks, early and in numbers: a delta sum
// whose additions leave the range of numbers fails each write after its first, inside the group
// commit, while the export is still starting its other writes (a hundred per turn of the loop).
// Each refusal is counted in partialSuccess; none is left unhandled (which ends the process).
import { afterAll, beforeAll, expect, test } from "bun:test";
import { call, startTestApp, type TestApp } from "../helpers.ts";

let server: TestApp;
beforeAll(async () => {
  server = await startTestApp({});
  await server.services.projects.create("shop");
});
afterAll(() => server.close());

const deltaSum = (name: string, points: number, value: number) => ({
  resourceMetrics: [
    {
      scopeMetrics: [
        {
          metrics: [
            {
              name,
              sum: {
                aggregationTemporality: "AGGREGATION_TEMPORALITY_DELTA",
                isMonotonic: true,
                dataPoints: Array.from({ length: points }, () => ({ asDouble: value })),
              },
            },
          ],
        },
      ],
    },
  ],
});

const exportMetrics = async (body: unknown) => {
  const response = await server.fetch("/otlp/v1/metrics", {
    method: "POST",
    headers: {
      Authorization: `Bearer ${server.token}`,
      "Content-Type": "application/json",
      "X-Signalboard-Project": "shop",
    },
    body: JSON.stringify(body),
  });
  return { status: response.status, json: await response.json() };
};

test("a delta sum that overflows at its second point: the other 999 are refused and told, and the server goes on", async () => {
  const answer = await exportMetrics(deltaSum("overflow", 1000, 1e308));
  expect(answer.status).toBe(200);
  expect(answer.json.partialSuccess.rejectedDataPoints).toBe("999");
  expect(answer.json.partialSuccess.errorMessage).toContain("would leave the range of numbers");
  const metrics = (await call(server, { path: "/v1/metrics?project=shop" })).json.metrics;
  expect(metrics).toContainEqual(expect.objectContaining({ title: "overflow", value: 1e308 }));

  // A metric that holds text cannot be added to: each point of a delta sum is refused, the same way.
  expect(
    (
      await call(server, {
        method: "POST",
        path: "/send-metric",
        body: { project: "shop", title: "mood", value: "calm" },
      })
    ).status,
  ).toBe(200);
  const text = await exportMetrics(deltaSum("mood", 1000, 1));
  expect(text.json.partialSuccess.rejectedDataPoints).toBe("1000");
  expect(text.json.partialSuccess.errorMessage).toContain("cannot be incremented");

  expect((await exportMetrics(deltaSum("after", 3, 2))).json).toEqual({});
});
