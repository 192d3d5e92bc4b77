// How much of OTLP's exports is being written at once (src/domain/otlp/service.ts): each record is
// a write of its own, queued for the group commit, and an export of a hundred bytes (ten thousand
// empty records, gzipped) makes ten thousand of them. Exports whose writes are still under way
// hold them all in memory, so past a bound the next export is told to retry, nothing of it written.
import { expect, test } from "bun:test";
import type { PlannedLogs, PlannedMetrics } from "../../src/domain/otlp/plan.ts";
import { EXPORT_LIMIT } from "../../src/domain/otlp/plan.ts";
import { otlpService, WRITING_LIMIT } from "../../src/domain/otlp/service.ts";
import { AppError } from "../../src/errors.ts";
import type { Project } from "../../src/model/project.ts";
import type { Scope } from "../../src/model/access.ts";

/** An ingest whose writes settle only when the test says so. */
function heldIngest() {
  const held: (() => void)[] = [];
  let written = 0;
  const write = () =>
    new Promise((resolve) =>
      held.push(() => {
        written++;
        resolve({ result: { id: written } });
      }),
    );
  return {
    ingest: { logEvent: write, recordMetric: write } as never,
    held,
    release: () => {
      for (const settle of held.splice(0)) settle();
    },
    written: () => written,
  };
}

const scope: Scope = { kind: "full", tokenId: 1, projects: null };
const logs = (n: number): PlannedLogs => [
  {
    projectAttribute: null,
    made: Array.from({ length: n }, (_, i) => ({ input: { channel: "otel", event: `r${i}` } })),
  },
];
const gauges = (n: number): PlannedMetrics => [
  {
    projectAttribute: null,
    made: Array.from({ length: n }, (_, i) => ({ inputs: [{ title: `load ${i}`, value: i }] as never })),
  },
];

const until = async (condition: () => boolean) => {
  while (!condition()) await new Promise((resolve) => setImmediate(resolve));
};

test("past WRITING_LIMIT records being written, an export is told to retry and writes nothing; once they are, it is written", async () => {
  const { ingest, held, release, written } = heldIngest();
  const otlp = otlpService({
    ingest,
    requireProject: async () => ({ name: "shop" }) as Project,
    defaultProject: "shop",
  });
  const now = Date.UTC(2026, 10, 29);
  const full = Math.floor(WRITING_LIMIT / EXPORT_LIMIT);
  const under = Array.from({ length: full }, (_, i) =>
    i % 2
      ? otlp.exportLogs(scope, logs(EXPORT_LIMIT), null, now)
      : otlp.exportMetrics(scope, gauges(EXPORT_LIMIT), null, now),
  );
  await until(() => held.length === full * EXPORT_LIMIT);

  for (const refused of [
    otlp.exportLogs(scope, logs(EXPORT_LIMIT), null, now),
    otlp.exportMetrics(scope, gauges(1 + WRITING_LIMIT - full * EXPORT_LIMIT), null, now),
  ]) {
    const error = await refused.then(
      () => null,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(AppError);
    expect(error).toMatchObject({ kind: "unavailable", code: "busy", details: { retryAfter: 1 } });
    expect((error as AppError).message).toContain("nothing of this one was stored");
  }
  expect(held.length).toBe(full * EXPORT_LIMIT);

  release();
  for (const answer of await Promise.all(under)) expect(answer).toEqual({ count: 0, reason: null });
  expect(written()).toBe(full * EXPORT_LIMIT);

  // The bound is on what is under way, not on what was written: the next export is written whole.
  const next = otlp.exportLogs(scope, logs(EXPORT_LIMIT), null, now);
  await until(() => held.length === EXPORT_LIMIT);
  release();
  expect(await next).toEqual({ count: 0, reason: null });
});

test("an export refused for other reasons, or whose writes failed, leaves nothing counted as under way", async () => {
  const { held, release } = heldIngest();
  let failing = true;
  const ingest = {
    logEvent: () =>
      failing
        ? Promise.reject(new Error("the disk is full"))
        : new Promise((r) => held.push(() => r({ result: { id: 1 } }))),
  } as never;
  const otlp = otlpService({
    ingest,
    requireProject: async () => ({ name: "shop" }) as Project,
    defaultProject: "shop",
  });
  const now = Date.UTC(2026, 10, 29);
  for (let i = 0; i < 6; i++)
    expect(await otlp.exportLogs(scope, logs(EXPORT_LIMIT), null, now).catch((e: Error) => e.message)).toBe(
      "the disk is full",
    );
  failing = false;
  const exports = Array.from({ length: Math.floor(WRITING_LIMIT / EXPORT_LIMIT) }, () =>
    otlp.exportLogs(scope, logs(EXPORT_LIMIT), null, now),
  );
  await until(() => held.length === WRITING_LIMIT - (WRITING_LIMIT % EXPORT_LIMIT));
  release();
  for (const answer of await Promise.all(exports)) expect(answer).toEqual({ count: 0, reason: null });
});
