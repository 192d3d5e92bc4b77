// A local HTTP receiver standing in for a webhook endpoint, ntfy, Discord or Slack: it records
// every request, answers 200 unless told otherwise, and can be told to hold requests, to stand in
// for a receiver that answers late or never.
export type ReceivedRequest = { path: string; headers: Record<string, string>; body: string };

export async function startReceiver() {
  const requests: ReceivedRequest[] = [];
  const replies: number[] = [];
  let held: { until: Promise<void>; release: () => void } | null = null;
  const server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    idleTimeout: 0, // a held request must not be cut by the server's own idle timer
    async fetch(request) {
      requests.push({
        path: new URL(request.url).pathname,
        headers: Object.fromEntries(request.headers),
        body: await request.text(),
      });
      if (held) await held.until;
      const status = replies.shift() ?? 200;
      return new Response(status === 200 ? "ok" : "INTERNAL-SECRET from the receiver", { status });
    },
  });
  return {
    url: `http://127.0.0.1:${server.port}`,
    requests,
    replies,
    /** Requests from now on get no answer until release(). */
    hold(): void {
      let release = () => {};
      const until = new Promise<void>((resolve) => (release = resolve));
      held = { until, release };
    },
    /** Answers the held requests, and the next ones at once. */
    release(): void {
      held?.release();
      held = null;
    },
    stop(): void {
      held?.release();
      void server.stop(true);
    },
  };
}

export type Receiver = Awaited<ReturnType<typeof startReceiver>>;
