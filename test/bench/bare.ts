export {};
// The baseline: a bare Bun.serve that does the minimum a real ingest endpoint must (check a Bearer
// header, parse the JSON body, answer JSON). Signalboard's numbers are printed as ratios to it.
const token = process.env.BENCH_TOKEN ?? "bench";
const server = Bun.serve({
  port: 0,
  hostname: "127.0.0.1",
  async fetch(request) {
    if (request.headers.get("authorization") !== `Bearer ${token}`)
      return Response.json({ success: false, statusCode: 401 }, { status: 401 });
    const body = (await request.json()) as { event?: string };
    return Response.json({ success: true, statusCode: 200, event: body.event });
  },
});
console.log(`listening ${server.url}`);
