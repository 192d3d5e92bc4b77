// JSON bodies whose bytes are not UTF-8 (stray bytes, encoded surrogates, cut sequences) are
// refused with a 400 that names the field holding them, on every JSON route, sent with their size
// or chunked; nothing is stored. A real U+FFFD, sent as UTF-8, is text like any other.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { call, post, startTestServer, type TestServer } from "../helpers.ts";

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
  await server.services.projects.create("shop");
});
afterAll(() => server.close());

const BAD = {
  stray: [0xff, 0xfe, 0xc3, 0x28], // bytes no UTF-8 text holds, then a lead byte with no continuation
  surrogate: [0xed, 0xa0, 0x80], // U+D800 encoded: a surrogate, which UTF-8 may not encode
  overlong: [0xc0, 0xaf], // "/" in two bytes
  cut: [0xe2, 0x82], // the first two bytes of "€"
};

/** JSON text with `bytes` spliced in where `@@` stands. */
const body = (json: string, bytes: number[]): Uint8Array<ArrayBuffer> => {
  const [before, after] = json.split("@@") as [string, string];
  return new Uint8Array(Buffer.concat([Buffer.from(before), Buffer.from(bytes), Buffer.from(after)]));
};

async function send(path: string, bytes: Uint8Array<ArrayBuffer>, { method = "POST", chunked = false } = {}) {
  const response = await fetch(server.url + path, {
    method,
    headers: { Authorization: `Bearer ${server.token}`, "Content-Type": "application/json" },
    // A stream has no declared size: it is sent chunked, and read as it comes.
    body: chunked
      ? new ReadableStream({
          start(controller) {
            controller.enqueue(bytes.subarray(0, 7));
            controller.enqueue(bytes.subarray(7));
            controller.close();
          },
        })
      : bytes,
  });
  return { status: response.status, json: (await response.json()) as any };
}

const stored = async () => (await call(server, { path: "/v1/events?project=shop&limit=100" })).json.events.length;

describe("a JSON body that is not UTF-8", () => {
  test("is a 400 naming the field, on /v1/log, /log-event and /v1/identify, sized or chunked; nothing is stored", async () => {
    const before = await stored();
    const cases: { path: string; json: string; bytes: number[]; field: string; method?: string }[] = [
      { path: "/v1/log", json: '{"project":"shop","channel":"web","event":"a@@b"}', bytes: BAD.stray, field: "event" },
      {
        path: "/v1/log",
        json: '{"project":"shop","channel":"web","event":"ok","description":"x@@"}',
        bytes: BAD.surrogate,
        field: "description",
      },
      {
        path: "/v1/log",
        json: '{"project":"shop","channel":"web","event":"ok","tags":{"plan":"p@@"}}',
        bytes: BAD.overlong,
        field: "tags.plan",
      },
      {
        path: "/log-event",
        json: '{"project":"shop","channel":"web","title":"@@"}',
        bytes: BAD.cut,
        field: "title",
      },
      {
        path: "/log-event",
        json: '{"project":"shop","channel":"web","title":"ok","message":"m @@ m"}',
        bytes: BAD.stray,
        field: "message",
      },
      { path: "/v1/identify", json: '{"project":"shop","user_id":"u@@"}', bytes: BAD.surrogate, field: "user_id" },
      {
        path: "/v1/identify",
        json: '{"project":"shop","user_id":"ann","properties":{"name":"@@ann"}}',
        bytes: BAD.stray,
        field: "properties.name",
      },
      { path: "/v1/insight", json: '{"project":"shop","title":"q@@","value":1}', bytes: BAD.cut, field: "title" },
      {
        path: "/v1/alerts",
        json: '{"project":"shop","name":"r@@","kind":"count","filter":{},"window":3600,"above":1}',
        bytes: BAD.surrogate,
        field: "name",
      },
    ];
    for (const c of cases)
      for (const chunked of [false, true]) {
        const res = await send(c.path, body(c.json, c.bytes), { chunked, method: c.method });
        const what = { path: c.path, field: c.field, chunked };
        expect({ ...what, status: res.status, error: res.json.error }).toEqual({
          ...what,
          status: 400,
          error: "validation_error",
        });
        expect(res.json.validation.body).toEqual([expect.objectContaining({ path: c.field, type: "invalid_string" })]);
        expect(res.json.message).toContain(`${c.field}: is not well-formed UTF-8`);
      }
    expect(await stored()).toBe(before);
    expect((await call(server, { path: "/v1/alerts?project=shop" })).json.alerts).toEqual([]);
  });

  test("a key that is not UTF-8 is named by the object that holds it; bytes outside any string are not JSON", async () => {
    const key = await send(
      "/v1/log",
      body('{"project":"shop","channel":"web","event":"e","tags":{"p@@":"x"}}', BAD.stray),
    );
    expect(key.status).toBe(400);
    expect(key.json.validation.body).toEqual([expect.objectContaining({ path: "tags", type: "invalid_key" })]);
    const outside = await send("/v1/log", body('{"project":"shop","channel":"web","event":"e"}@@', BAD.stray));
    expect(outside.status).toBe(400);
    expect(outside.json.error).toBe("invalid_json");
    expect(outside.json.message).toContain("not UTF-8");
  });

  test("a real U+FFFD (and other text) sent as UTF-8 is stored as sent", async () => {
    const event = "Replacement \ufffd kept, with é and 🚀";
    const res = await post(server, "/v1/log", { project: "shop", channel: "web", event, description: "\ufffd" });
    expect(res.status).toBe(200);
    const found = (await call(server, { path: "/v1/events?project=shop&limit=5" })).json.events[0];
    expect(found).toMatchObject({ event, description: "\ufffd" });
    // Sent chunked too, with a byte-order mark before it (which UTF-8 readers drop).
    const withBom = await send(
      "/v1/log",
      body(`@@${JSON.stringify({ project: "shop", channel: "web", event: "\ufffd" })}`, [0xef, 0xbb, 0xbf]),
      { chunked: true },
    );
    expect(withBom.status).toBe(200);
  });
});
