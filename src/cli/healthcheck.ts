// signalboard healthcheck: asks the server this configuration runs (PORT, HOST; found as every
// command that talks to the server finds it) for /healthz, for container HEALTHCHECKs and scripts
// on hosts without curl. Exit 0 when it answers ok, else 1.
import { serverUrl } from "./client.ts";
import { type Command, parse, UsageError } from "./command.ts";

const TIMEOUT_MS = 3000;

export const healthcheck: Command = {
  summary: "check that the server on this configuration's port answers (exit 0) or not (exit 1)",
  usage: "signalboard healthcheck [--url URL | --port N [--host H]] [--env-file FILE]",
  async run(argv) {
    const { values, positionals } = parse(argv, { url: { type: "string" } });
    if (positionals.length)
      throw new UsageError(`unexpected argument "${positionals[0]}": healthcheck takes only settings`);
    const url = `${serverUrl(values)}/healthz`;
    try {
      const response = await fetch(url, { signal: AbortSignal.timeout(TIMEOUT_MS), redirect: "manual" });
      const body = (await response.json().catch(() => null)) as { status?: string; version?: string } | null;
      if (response.status === 200 && body?.status === "ok") {
        console.log(`ok: signalboard ${body.version ?? "(version unknown)"} answers at ${url}`);
        return 0;
      }
      console.error(`error: ${url} answered ${response.status}${body?.status ? ` (${body.status})` : ""}, not 200 ok`);
    } catch (error) {
      const { name, code, message } = error as Error & { code?: string };
      const refused = code === "ConnectionRefused" || message.includes("ECONNREFUSED");
      const why =
        name === "TimeoutError"
          ? `no answer within ${TIMEOUT_MS / 1000} s`
          : refused
            ? "nothing listens there (is the server running, on this port?)"
            : message;
      console.error(`error: ${url} does not answer: ${why}`);
    }
    return 1;
  },
};
