// Follows /v1/stream and prints each event as it is stored; reconnects with Last-Event-ID, so a
// server restart loses nothing and repeats nothing.
import { clientFrom, clientOptions, type Client } from "./client.ts";
import { type Command, parse, UsageError } from "./command.ts";

type StreamEvent = {
  id: number;
  project: string;
  channel: string;
  event: string;
  description: string | null;
  icon: string | null;
  tags: Record<string, unknown>;
  user_id: string | null;
  timestamp: number;
};

export const tail: Command = {
  summary: "print events from a running server as they arrive",
  usage: "signalboard tail [--project P [--channel C]] [--json] [--url URL] [--token TOKEN]",
  async run(argv) {
    const { values } = parse(argv, {
      ...clientOptions,
      project: { type: "string" },
      channel: { type: "string" },
      json: { type: "boolean" },
    });
    const client = clientFrom(values);
    const query = new URLSearchParams();
    if (values.channel && !values.project)
      throw new UsageError("--channel needs --project: channel names are per project");
    if (values.project) query.set("project", values.project);
    if (values.channel) query.set("channel", values.channel);
    const print = values.json
      ? (e: StreamEvent) => console.log(JSON.stringify(e))
      : (e: StreamEvent) => console.log(describe(e));
    let lastId: string | null = null;
    for (let delay = 1000; ; delay = Math.min(delay * 2, 10_000)) {
      const status = await follow(client, `/v1/stream?${query}`, lastId, (id, data, event) => {
        lastId = id ?? lastId;
        delay = 1000;
        // The server could not replay everything missed while disconnected: say so, and go on from now.
        if (event === "reset") console.error(`tail: ${(JSON.parse(data) as { message: string }).message}`);
        else print(JSON.parse(data) as StreamEvent);
      });
      if (status >= 400 && status < 500) return 1; // bad token or unknown project: retrying will not help
      await Bun.sleep(delay);
    }
  },
};

async function follow(
  client: Client,
  path: string,
  lastId: string | null,
  onEvent: (id: string | null, data: string, event: string | null) => void,
): Promise<number> {
  const headers: Record<string, string> = { Authorization: `Bearer ${client.token}`, Accept: "text/event-stream" };
  if (lastId) headers["Last-Event-ID"] = lastId;
  let response: Response;
  try {
    response = await fetch(client.url + path, { headers });
  } catch (error) {
    console.error(`tail: cannot reach ${client.url} (${(error as Error).message}); retrying`);
    return 0;
  }
  if (!response.ok || !response.body) {
    const payload = (await response.json().catch(() => ({}))) as { message?: string };
    console.error(`tail: ${response.status} ${payload.message ?? response.statusText}`);
    return response.status;
  }
  const decoder = new TextDecoder();
  let buffer = "";
  try {
    for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
      buffer += decoder.decode(chunk, { stream: true });
      let end: number;
      while ((end = buffer.indexOf("\n\n")) >= 0) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const lines = block.split("\n");
        const data = lines
          .filter((l) => l.startsWith("data: "))
          .map((l) => l.slice(6))
          .join("\n");
        const id = lines.find((l) => l.startsWith("id: "))?.slice(4) ?? null;
        const event = lines.find((l) => l.startsWith("event: "))?.slice(7) ?? null;
        if (data) onEvent(id, data, event);
      }
    }
  } catch {
    // the connection dropped; the caller reconnects
  }
  console.error("tail: stream closed; reconnecting");
  return 0;
}

function describe(e: StreamEvent): string {
  const time = new Date(e.timestamp * 1000).toISOString().replace("T", " ").slice(0, 19);
  const tags = Object.entries(e.tags ?? {})
    .map(([k, v]) => `${k}=${String(v)}`)
    .join(" ");
  const parts = [time, `${e.project}/${e.channel}`, `${e.icon ? e.icon + " " : ""}${e.event}`];
  if (e.description) parts.push(e.description.replace(/\s+/g, " ").slice(0, 120));
  if (e.user_id) parts.push(`user=${e.user_id}`);
  if (tags) parts.push(tags);
  return parts.join("  ");
}
