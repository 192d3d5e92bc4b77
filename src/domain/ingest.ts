// Ingest: events, metrics and user traits. Each operation checks access, then runs its write
// (domain/ingest-writes.ts) in the writer's next group commit, then announces it to live views once
// it is on disk.
import type { Announce } from "../live/hub.ts";
import type { Scope } from "../model/access.ts";
import { assertCanNotify, assertCanSendEvent, assertCanWriteProject, assertTokenReachesDefault } from "./access.ts";
import {
  type GroupInput,
  type IdentifyInput,
  type Idempotency,
  type ImportLine,
  type IngestWrite,
  type IngestWrites,
  importKey,
  type LogInput,
  type MetricInput,
  type Written,
} from "./ingest-writes.ts";
import type { StoredEvent } from "../model/event.ts";
import type { Metric } from "../model/metric.ts";
import { type PageViewInput, pageViewEvent } from "./page-views.ts";

export type {
  GroupInput,
  IdentifyInput,
  Idempotency,
  ImportLine,
  LogInput,
  MetricInput,
  Written,
} from "./ingest-writes.ts";

export type ImportProgress = { imported: number; skipped: number };

const IMPORT_BATCH = 1000;
export { newEvent } from "./ingest-writes.ts";

/**
 * Runs one of ingest's writes in a group commit and settles once it committed. A write whose
 * client left (`signal`) before its transaction began is not made.
 */
export type RunWrite = <K extends IngestWrite>(
  name: K,
  args: Parameters<IngestWrites[K]>[1],
  signal?: AbortSignal,
) => ReturnType<IngestWrites[K]>;

export type IngestDeps = { run: RunWrite; announce: Announce; defaultProject: string; baseUrl: string };

/** How a write is asked for: with an Idempotency-Key, with the signal of the request that asked, at a given time (tests). */
export type WriteOptions = { idempotency?: Idempotency; signal?: AbortSignal; now?: number };

export function ingestService({ run, announce, defaultProject, baseUrl }: IngestDeps) {
  async function logEvent(
    scope: Scope,
    input: LogInput,
    { idempotency, signal, now = Date.now() }: WriteOptions = {},
  ): Promise<Written<StoredEvent>> {
    assertCanSendEvent(scope, input.project, input.channel);
    if (input.notify && input.timestamp === undefined) assertCanNotify(scope); // a historical event never pushes
    const { written, newChannel } = await run("logEvent", { input, idempotency, now, baseUrl }, signal);
    if (written.result) {
      if (newChannel)
        announce({
          type: "channel",
          projectId: written.result.projectId,
          project: written.result.project,
          channel: written.result.channel,
        });
      announce({ type: "event", event: written.result });
    }
    return written;
  }

  return {
    logEvent,

    /** A page view is an event in the pageviews channel (domain/page-views.ts): the same checks, the same write. */
    pageView(scope: Scope, input: PageViewInput, options: WriteOptions = {}): Promise<Written<StoredEvent>> {
      return logEvent(scope, pageViewEvent(input), options);
    },

    /** Sets the value, or adds to it with `increment` (a metric that does not exist starts at 0). */
    async recordMetric(
      scope: Scope,
      input: MetricInput,
      { idempotency, signal, now = Date.now() }: WriteOptions = {},
    ): Promise<Written<Metric>> {
      if (input.project === undefined) assertTokenReachesDefault(scope, defaultProject);
      const project = input.project ?? (scope.kind === "public" ? scope.project : defaultProject);
      assertCanWriteProject(scope, project, "metrics");
      const written = await run("recordMetric", { input, project, idempotency, now }, signal);
      if (written.result) announce({ type: "metric", metric: written.result });
      return written;
    },

    async identify(
      scope: Scope,
      input: IdentifyInput,
      { idempotency, signal, now = Date.now() }: WriteOptions = {},
    ): Promise<Written<null>> {
      assertCanWriteProject(scope, input.project, "user properties");
      return run("identify", { input, idempotency, now }, signal);
    },

    async group(
      scope: Scope,
      input: GroupInput,
      { idempotency, signal, now = Date.now() }: WriteOptions = {},
    ): Promise<Written<null>> {
      assertCanWriteProject(scope, input.project, "group properties");
      return run("group", { input, idempotency, now }, signal);
    },

    /**
     * Stores events as historical (at their own timestamps, never notified), a thousand per
     * transaction; events already present are skipped, so running an import again adds nothing and
     * finishes one that was cut short. A file that holds an event twice stores it twice, never more.
     * From the command line only: it needs no token.
     */
    async importEvents(
      lines: ImportLine[],
      onBatch: (progress: ImportProgress) => void = () => {},
      now = Date.now(),
    ): Promise<ImportProgress & { createdProjects: string[] }> {
      const progress = { imported: 0, skipped: 0 };
      const createdProjects: string[] = [];
      const seen = new Map<string, number>(); // how often each event was met in the file so far
      const entries = lines.map((line) => {
        const key = importKey(line);
        const ordinal = (seen.get(key) ?? 0) + 1;
        seen.set(key, ordinal);
        return { line, ordinal };
      });
      for (let i = 0; i < entries.length; i += IMPORT_BATCH) {
        const done = await run("importBatch", { lines: entries.slice(i, i + IMPORT_BATCH), now });
        createdProjects.push(...done.created);
        progress.imported += done.imported;
        progress.skipped += done.skipped;
        onBatch({ ...progress });
      }
      return { ...progress, createdProjects };
    },
  };
}
