// GET /v1/stream: JSON events over SSE for scripts, with resume from Last-Event-ID.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { call, eventually, openSse, post, startTestServer, type TestServer } from "../helpers.ts";

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
  await server.services.projects.create("app");
});
afterAll(() => server.close());

const auth = () => ({ Authorization: `Bearer ${server.token}` });

describe("GET /v1/stream", () => {
  test("answers with SSE headers at once, before any event", async () => {
    // Nothing is posted: the headers came on their own (openSse resolves once they have arrived).
    const stream = await openSse(`${server.url}/v1/stream?project=app`, auth());
    expect(stream.frames).toHaveLength(0);
    expect(stream.response.status).toBe(200);
    expect(stream.response.headers.get("content-type")).toContain("text/event-stream");
    expect(stream.response.headers.get("cache-control")).toBe("no-store");
    expect(stream.response.headers.get("x-accel-buffering")).toBe("no");
    stream.close();
  });

  test("delivers events of its project as JSON with their id, and only those", async () => {
    const stream = await openSse(`${server.url}/v1/stream?project=app`, auth());
    await post(server, "/v1/log", { project: "default", channel: "x", event: "elsewhere" });
    const sent = await post(server, "/v1/log", { project: "app", channel: "x", event: "hello", tags: { a: 1 } });
    const [frame] = await stream.waitFor(1);
    expect(frame!.id).toBe(String(sent.json.id));
    expect(JSON.parse(frame!.data)).toMatchObject({
      id: sent.json.id,
      project: "app",
      channel: "x",
      event: "hello",
      tags: { a: 1 },
    });
    stream.close();
  });

  test("filters by channel", async () => {
    const stream = await openSse(`${server.url}/v1/stream?project=app&channel=only`, auth());
    await post(server, "/v1/log", { project: "app", channel: "other", event: "no" });
    // The marker: sent after the other channel's event on the same stream, so once it is here, that one would be too.
    await post(server, "/v1/log", { project: "app", channel: "only", event: "yes" });
    const frames = await stream.waitFor(1);
    expect(frames.map((f) => JSON.parse(f.data).event)).toEqual(["yes"]);
    stream.close();
  });

  test("resumes after Last-Event-ID: what was missed, in order, once", async () => {
    const first = await post(server, "/v1/log", { project: "app", channel: "resume", event: "seen" });
    const missed = [];
    for (const name of ["missed-1", "missed-2", "missed-3"])
      missed.push((await post(server, "/v1/log", { project: "app", channel: "resume", event: name })).json.id);
    const stream = await openSse(`${server.url}/v1/stream?project=app&channel=resume`, {
      ...auth(),
      "Last-Event-ID": String(first.json.id),
    });
    await post(server, "/v1/log", { project: "app", channel: "resume", event: "live" });
    // A marker after them: a repeat of any of the four would come before it.
    await post(server, "/v1/log", { project: "app", channel: "resume", event: "marker" });
    const frames = await stream.waitFor(5);
    expect(frames.map((f) => JSON.parse(f.data).event)).toEqual(["missed-1", "missed-2", "missed-3", "live", "marker"]);
    expect(frames.slice(0, 3).map((f) => Number(f.id))).toEqual(missed);
    stream.close();
  });

  test("a channel without its project is a 400 (channel names are per project), not a stream of every channel", async () => {
    const res = await call(server, { path: "/v1/stream?channel=deploys" });
    expect(res.status).toBe(400);
    expect(res.json.message).toContain("need a project");
  });

  test("an unknown project is a JSON 404, not a stream", async () => {
    const res = await call(server, { path: "/v1/stream?project=nope" });
    expect(res.status).toBe(404);
    expect(res.json.error).toBe("not_found");
  });

  test("closing the client removes its subscription", async () => {
    const before = server.services.fanout.size;
    const stream = await openSse(`${server.url}/v1/stream`, auth());
    expect(server.services.fanout.size).toBe(before + 1);
    stream.close();
    await eventually(() => expect(server.services.fanout.size).toBe(before));
  });
});
