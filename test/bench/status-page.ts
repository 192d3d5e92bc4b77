// A status page's read at scale, for the analytics benchmark: a check and an alert rule whose notices
// seed.ts put in the `alerts` channel among the other events (one in NOTICE_EVERY), shown by status
// shares. A page works out each check's and rule's 90 days from a read of the alerts channel by its
// tag (domain/share-status.ts). A page's answer is kept until an event of its project arrives, so
// each timed request opens a share of its own (the same check and rule): every answer is worked
// out, none is the one kept.
import { NOTICE_EVERY, NOTICE_THINGS } from "./seed.ts";

/** Shares made: the timed requests' (samples and warm-ups) and the loop's, which goes round them. */
const SHARES = 64;

export type StatusPage = {
  /** The path of the i-th share's page (i modulo the shares made). */
  path: (i: number) => string;
  /** The notices of the check's (or the rule's) in the data set: what each of its reads returns. */
  notices: number;
};

async function posted<T>(url: string, headers: Record<string, string>, body: unknown): Promise<T> {
  const res = await fetch(url, {
    method: "POST",
    headers: { ...headers, "Content-Type": "application/json" },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`benchmark set-up failed: POST ${url}: ${res.status} ${text.slice(0, 200)}`);
  return JSON.parse(text) as T;
}

/** The check job-1 and the first alert rule the seed's notices name, and SHARES status pages of both. */
export async function statusPages(url: string, headers: Record<string, string>, events: number): Promise<StatusPage> {
  const { check } = await posted<{ check: { id: number } }>(`${url}/v1/checks`, headers, {
    project: "bench",
    name: "job-1",
    slug: "job-1",
    period: 86_400,
  });
  // Never firing, so the runner writes no notice of its own meanwhile.
  const { alert } = await posted<{ alert: { id: number } }>(`${url}/v1/alerts`, headers, {
    project: "bench",
    name: "Rule 1",
    kind: "count",
    filter: { channel: "payments" },
    window: 300,
    above: 1_000_000_000,
  });
  if (alert.id < 1 || alert.id > NOTICE_THINGS)
    throw new Error(`the benchmark's rule got id ${alert.id}: the seed's notices name rules 1 to ${NOTICE_THINGS}`);
  const keys: string[] = [];
  for (let i = 0; i < SHARES; i++) {
    const made = await posted<{ url: string }>(`${url}/v1/shares`, headers, {
      project: "bench",
      kind: "status",
      checks: [check.id],
      alerts: [alert.id],
      title: `Status ${i}`,
    });
    keys.push(new URL(made.url).pathname);
  }
  return {
    path: (i) => keys[i % keys.length]!,
    notices: Math.ceil(events / NOTICE_EVERY / (2 * NOTICE_THINGS)),
  };
}

/** What a status page showed, in a few words: its items' days down and up. */
export function statusSummary(body: string): string {
  const count = (state: string) => body.split(`data-day="${state}"`).length - 1;
  return `${count("down")} days down, ${count("up")} up`;
}

/**
 * The status pages asked in two loops at once, round the shares, each ask after an event posted to
 * the project (so no answer is one kept): the loop while a page's days are worked out.
 */
export function statusLoops(page: StatusPage, headers: Record<string, string>): ((url: string) => Promise<void>)[] {
  let next = 0;
  const ask = async (url: string) => {
    const res = await fetch(`${url}/v1/log`, {
      method: "POST",
      headers: { ...headers, "Content-Type": "application/json" },
      body: JSON.stringify({ project: "bench", channel: "stall", event: "meanwhile" }),
    });
    await res.text();
    await (await fetch(url + page.path(next++))).text();
  };
  return [ask, ask];
}
