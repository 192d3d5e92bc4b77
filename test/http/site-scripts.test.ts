// The scripts other sites load: the tracker at /web/ls.js and the feedback widget at
// /feedback/ls.js, LogSnag's CDN paths. Served as JavaScript that any origin may read, compressed
// when the browser accepts it, cached briefly with a validator: a browser that has the current
// version gets a 304, one with an older version gets the new one. In-process: answers come as the
// app made them, compressed or not (no client in between unpacks them).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { startTestApp, type TestApp } from "../helpers.ts";

let server: TestApp;
beforeAll(async () => {
  server = await startTestApp();
});
afterAll(() => server.close());

const PUBLIC = join(import.meta.dir, "../../public");

for (const [path, file] of [
  ["/web/ls.js", "web/ls.js"],
  ["/feedback/ls.js", "feedback/ls.js"],
] as const) {
  describe(`GET ${path}`, () => {
    test("is the script from public/, as JavaScript that any origin may read, cached briefly with a validator", async () => {
      const res = await server.fetch(path, { headers: { Origin: "https://shop.example.com" } });
      expect(res.status).toBe(200);
      expect(await res.text()).toBe(await Bun.file(join(PUBLIC, file)).text());
      expect(res.headers.get("content-type")).toBe("text/javascript; charset=utf-8");
      expect(res.headers.get("access-control-allow-origin")).toBe("*");
      expect(res.headers.get("cross-origin-resource-policy")).toBe("cross-origin");
      expect(res.headers.get("x-content-type-options")).toBe("nosniff");
      expect(res.headers.get("cache-control")).toBe("public, max-age=300");
      expect(res.headers.get("etag")).toMatch(/^W\/"[0-9a-f]{16}"$/);
      expect(res.headers.get("content-encoding")).toBeNull();
    });

    test("gzipped when the browser accepts it, with the same validator", async () => {
      const plain = await server.fetch(path);
      const res = await server.fetch(path, { headers: { "Accept-Encoding": "gzip, deflate, br" } });
      expect(res.headers.get("content-encoding")).toBe("gzip");
      expect(res.headers.get("vary")).toBe("Accept-Encoding");
      expect(res.headers.get("etag")).toBe(plain.headers.get("etag"));
      const zipped = new Uint8Array(await res.arrayBuffer());
      expect(new TextDecoder().decode(Bun.gunzipSync(zipped))).toBe(await plain.text());
      expect(zipped.length).toBeLessThan(5 * 1024);
    });

    test("a 304 for the version the browser has, the script for any other", async () => {
      const etag = (await server.fetch(path)).headers.get("etag")!;
      for (const header of [etag, etag.replace(/^W\//, ""), `"0000000000000000", ${etag}`, "*"]) {
        const res = await server.fetch(path, { headers: { "If-None-Match": header } });
        expect({ header, status: res.status }).toEqual({ header, status: 304 });
        expect(await res.text()).toBe("");
        expect(res.headers.get("etag")).toBe(etag);
        expect(res.headers.get("cache-control")).toBe("public, max-age=300");
      }
      const stale = await server.fetch(path, { headers: { "If-None-Match": 'W/"0000000000000000"' } });
      expect(stale.status).toBe(200);
      expect((await stale.text()).length).toBeGreaterThan(1000);
    });
  });
}
