// The HTTP side of the CLI: `log`, `metric` and `tail` talk to a running server, for cron jobs and
// shell scripts, and `healthcheck` asks it how it is. Each finds the server with serverUrl. The
// token: --token, else SIGNALBOARD_TOKEN (or SIGNALBOARD_TOKEN_FILE, a file holding the token, so it
// stays out of the environment and the process list), from the environment or a file of settings
// (--env-file).
import { valueFromFile } from "../config.ts";
import { type Env, environment } from "../env-file.ts";
import { configFrom, UsageError } from "./command.ts";

export const clientOptions = {
  url: { type: "string" },
  token: { type: "string" },
} as const;

export type Client = { url: string; token: string };

type ClientValues = { url?: string; token?: string; "env-file"?: string } & Record<string, unknown>;

/**
 * Where the server is, found the same way by every command that talks to it: --url; else
 * SIGNALBOARD_URL (from the environment or --env-file); else this machine at the port of the
 * server's own settings (--port, else PORT from the environment, --env-file or an installed
 * server's settings file, else 8080), on loopback unless HOST names one interface. Not BASE_URL:
 * that is where browsers reach the dashboard, often through a proxy this machine need not pass.
 */
export function serverUrl(values: ClientValues, env: Env = environment(values)): string {
  const url = values.url || env.SIGNALBOARD_URL;
  if (url) return url.replace(/\/+$/, "");
  const config = configFrom(values, { installed: true });
  return `http://${localAddress(config.host)}:${config.port}`;
}

/** Where to reach a server listening on `host` from this machine: every interface is reached on loopback. */
function localAddress(host: string): string {
  if (host === "0.0.0.0" || host === "") return "127.0.0.1";
  if (host === "::" || host === "[::]") return "[::1]";
  return host.includes(":") && !host.startsWith("[") ? `[${host}]` : host;
}

export function clientFrom(values: ClientValues, env: Env = environment(values)): Client {
  const url = serverUrl(values, env);
  if (!values.token && env.SIGNALBOARD_TOKEN && env.SIGNALBOARD_TOKEN_FILE)
    throw new UsageError("SIGNALBOARD_TOKEN and SIGNALBOARD_TOKEN_FILE are both set: keep one");
  const token =
    values.token ??
    (env.SIGNALBOARD_TOKEN ||
      (env.SIGNALBOARD_TOKEN_FILE ? valueFromFile("SIGNALBOARD_TOKEN_FILE", env.SIGNALBOARD_TOKEN_FILE) : undefined));
  if (!token)
    throw new UsageError(
      "a token is required: pass --token or set SIGNALBOARD_TOKEN or SIGNALBOARD_TOKEN_FILE (create one with: signalboard token create --name NAME)",
    );
  return { url, token };
}

export class RequestFailed extends Error {}

const ATTEMPTS = 4;

/**
 * POSTs JSON; a non-2xx answer becomes an error carrying the server's message. Network errors,
 * 429 and 5xx are retried a few times with the same Idempotency-Key, so a retry of a request the
 * server did store (but whose answer was lost) is not stored twice.
 */
export async function postJson(client: Client, path: string, body: unknown): Promise<Record<string, unknown>> {
  const key = crypto.randomUUID();
  for (let attempt = 1; ; attempt++) {
    let response: Response;
    try {
      response = await fetch(client.url + path, {
        method: "POST",
        headers: {
          "Content-Type": "application/json",
          Authorization: `Bearer ${client.token}`,
          "Idempotency-Key": key,
        },
        body: JSON.stringify(body),
        signal: AbortSignal.timeout(15_000),
      });
    } catch (error) {
      if (attempt < ATTEMPTS) {
        await Bun.sleep(500 * 2 ** attempt);
        continue;
      }
      throw new RequestFailed(`could not reach ${client.url}: ${(error as Error).message}`);
    }
    const payload = (await response.json().catch(() => ({}))) as Record<string, unknown>;
    if (response.ok) return payload;
    if ((response.status === 429 || response.status >= 500) && attempt < ATTEMPTS) {
      const wait = Number(response.headers.get("retry-after"));
      await Bun.sleep(Number.isFinite(wait) && wait > 0 ? Math.min(wait, 30) * 1000 : 500 * 2 ** attempt);
      continue;
    }
    throw new RequestFailed(`${response.status}: ${String(payload.message ?? response.statusText)}`);
  }
}

/**
 * "true"/"false" become booleans and numerals numbers, as a shell cannot say which it meant; a
 * numeral that would not come back the same ("007", 99999999999999999999) stays text.
 */
export function scalar(text: string): string | number | boolean {
  if (text === "true" || text === "false") return text === "true";
  if (/^-?\d+(\.\d+)?$/.test(text) && String(Number(text)) === text) return Number(text);
  return text;
}

export function parseTags(pairs: string[] = []): Record<string, string | number | boolean> | undefined {
  if (pairs.length === 0) return undefined;
  const tags: Record<string, string | number | boolean> = {};
  for (const pair of pairs) {
    const at = pair.indexOf("=");
    if (at < 1) throw new UsageError(`--tag expects key=value, got "${pair}"`);
    tags[pair.slice(0, at)] = scalar(pair.slice(at + 1));
  }
  return tags;
}
