// The OTLP decoder's workers (src/api/otlp-decode.ts): what it hands back is what the export
// holds, in parts; an export is refused with the worker's own error; when too many wait it says to
// retry, one that takes too long is stopped and the next is read by a new worker, and one whose
// client left is not read.
import { expect, test } from "bun:test";
import { type ExportJob, OtlpDecoder, partsOf } from "../../src/api/otlp-decode.ts";
import type { PlannedLogs } from "../../src/domain/otlp/plan.ts";
import { AppError, ClientGone } from "../../src/errors.ts";

const json = (value: unknown) => new TextEncoder().encode(JSON.stringify(value));

const records = (n: number, project?: string) => ({
  resource: {
    attributes: [
      { key: "service.name", value: { stringValue: "api" } },
      ...(project ? [{ key: "signalboard.project", value: { stringValue: project } }] : []),
    ],
  },
  scopeLogs: [{ logRecords: Array.from({ length: n }, (_, i) => ({ body: { stringValue: `record ${i}` } })) }],
});

const job = (body: Uint8Array, more: Partial<Omit<ExportJob, "signal">> = {}): ExportJob & { signal: "logs" } => ({
  signal: "logs",
  encoding: "json",
  bytes: body,
  gzip: false,
  limit: 4 << 20,
  setting: "SIGNALBOARD_OTLP_BODY_LIMIT",
  publicToken: false,
  now: Date.UTC(2026, 10, 29),
  ...more,
});

/** What a refused plan was refused with, as plain fields. */
const refusal = async (plan: Promise<unknown>) => {
  const error = await plan.then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(AppError);
  const { kind, code, details } = error as AppError;
  return { kind, code, retryAfter: details.retryAfter };
};

const names = (plan: PlannedLogs) =>
  plan.flatMap((r) => r.made.map((m) => ("input" in m ? `${r.projectAttribute}:${m.input.event}` : m.refused)));

test("a plan comes back whole and in order, whatever parts it crossed in", async () => {
  const decoder = new OtlpDecoder({ size: 1 });
  const plan = await decoder.plan(
    job(json({ resourceLogs: [records(1234, "shop"), records(0), records(3, "other")] })),
  );
  const all = names(plan);
  expect(all).toHaveLength(1237);
  expect(all[0]).toBe("shop:record 0");
  expect(all[1233]).toBe("shop:record 1233");
  expect(all.slice(1234)).toEqual(["other:record 0", "other:record 1", "other:record 2"]);
  // The empty resource still names its project (null): its project is checked as the others are.
  expect(plan.some((r) => r.projectAttribute === null && r.made.length === 0)).toBe(true);
});

test("parts hold at most 500 records and keep each resource's project", () => {
  const made = (n: number) => Array.from({ length: n }, (_, i) => ({ refused: String(i) }));
  const parts = partsOf([
    { projectAttribute: "a", made: made(700) },
    { projectAttribute: null, made: [] },
    { projectAttribute: "b", made: made(300) },
  ]);
  expect(parts.map((p) => p.reduce((n, r) => n + r.made.length, 0))).toEqual([500, 500]);
  expect(parts[1]!.map((r) => [r.projectAttribute, r.made.length])).toEqual([
    ["a", 200],
    [null, 0],
    ["b", 300],
  ]);
  expect(partsOf([])).toEqual([[]]);
});

test("an export that cannot be read is refused with the worker's error, and the worker reads the next", async () => {
  const decoder = new OtlpDecoder({ size: 1 });
  const bad = decoder.plan(job(new TextEncoder().encode("{not json")));
  expect(await refusal(bad)).toMatchObject({ kind: "invalid", code: "invalid_json" });
  const notProtobuf = decoder.plan(job(new Uint8Array([0xff, 0xff, 0xff]), { encoding: "protobuf" }));
  expect(await refusal(notProtobuf)).toMatchObject({ kind: "invalid", code: "invalid_body" });
  const tooMany = decoder.plan(job(json({ resourceLogs: [records(1001)] }), { publicToken: true }));
  expect(await refusal(tooMany)).toMatchObject({ kind: "too_large", code: "payload_too_large" });
  const bomb = decoder.plan(job(Bun.gzipSync(new Uint8Array(5 << 20)), { gzip: true }));
  expect(await refusal(bomb)).toMatchObject({ kind: "too_large", code: "payload_too_large" });
  expect(names(await decoder.plan(job(json({ resourceLogs: [records(2)] }))))).toEqual([
    "null:record 0",
    "null:record 1",
  ]);
});

test("past its queue it says to retry; a client that left is not read", async () => {
  const decoder = new OtlpDecoder({ size: 1, queueLimit: 1 });
  const body = json({ resourceLogs: [records(3000)] });
  const first = decoder.plan(job(body));
  const left = new AbortController();
  const second = decoder.plan(job(json({ resourceLogs: [records(1)] })), left.signal);
  const busy = (async () => decoder.plan(job(json({ resourceLogs: [records(1)] }))))();
  expect(await refusal(busy)).toEqual({ kind: "unavailable", code: "busy", retryAfter: 1 });
  left.abort();
  await expect(second).rejects.toBeInstanceOf(ClientGone);
  expect(names(await first)).toHaveLength(3000);
});

test("an export that takes longer than its limit is stopped (503, retry later); a new worker reads the next", async () => {
  const decoder = new OtlpDecoder({ size: 1, limitMs: 1 });
  const slow = decoder.plan(job(json({ resourceLogs: [records(10_000)] })));
  expect(await refusal(slow)).toEqual({ kind: "unavailable", code: "export_timeout", retryAfter: 5 });
  const patient = new OtlpDecoder({ size: 1 });
  expect(names(await patient.plan(job(json({ resourceLogs: [records(1)] }))))).toEqual(["null:record 0"]);
});
