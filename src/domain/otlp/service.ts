// OpenTelemetry's exports (OTLP over HTTP) through ingest: each log record becomes the input
// /v1/log makes and each data point the input /v1/metric makes, and each goes through the same
// operation. A request the token may not make is refused whole before anything is written; what
// cannot be stored of an allowed one is counted and told (OTLP's partial success), the rest stored.
import { AppError, Forbidden, ValidationError } from "../../errors.ts";
import type { Scope } from "../../model/access.ts";
import { assertCanNotify, assertCanSendEvent, assertCanWriteProject } from "../access.ts";
import type { LogInput, MetricInput } from "../ingest-writes.ts";
import type { ingestService } from "../ingest.ts";
import { isName } from "../input-fields.ts";
import type { Project } from "../../model/project.ts";
import { NOTIFY_ATTRIBUTE } from "./logs.ts";
import type { MetricDraft } from "./metrics.ts";
import { assertExportSize, PROJECT_ATTRIBUTE, type PlannedLogs, type PlannedMetrics, plannedCount } from "./plan.ts";

/** What was refused of an export: how many (records or data points) and why, in a few words. */
export type Refused = { count: number; reason: string | null };

/** How many of an export's writes start in one turn of the event loop. */
const WRITES_PER_TURN = 100;

/**
 * The most records (or data points) of exports being written at once, in all: past it an export
 * is told to retry (503), nothing of it written. Each is a write queued for the group commit, held
 * in memory until it commits, and an export of a hundred bytes (ten thousand empty records,
 * gzipped) makes ten thousand: without a bound, exports sent faster than they commit take
 * gigabytes and hold the event loop. Five full exports' worth.
 */
export const WRITING_LIMIT = 50_000;

/** How much of an export's answer the reasons take: the first few, then how many more. */
const REASONS = 3;

type Deps = {
  ingest: ReturnType<typeof ingestService>;
  requireProject: (name: string) => Promise<Project>;
  defaultProject: string;
};

/** Errors a write makes on its own account (not the store's): the record is refused, the rest stored. */
const OWN_FAULT = new Set(["invalid", "not_found", "conflict", "rejected", "forbidden"]);

export function otlpService({ ingest, requireProject, defaultProject }: Deps) {
  /** How many writes of exports are under way (WRITING_LIMIT). */
  let writing = 0;

  /**
   * The project of a resource's records: the one named (by the header, else by the resource's
   * signalboard.project), else the token's only project, else the default project. A name the
   * token does not reach is refused by the access checks, as /v1/log refuses it.
   */
  function projectOf(
    scope: Scope,
    header: string | null,
    attribute: string | null,
  ): { project: string; named: string } {
    if (header !== null) return { project: header, named: "the X-Signalboard-Project header" };
    if (attribute !== null) return { project: attribute, named: `the resource attribute ${PROJECT_ATTRIBUTE}` };
    const own = scope.kind === "public" ? scope.project : scope.projects?.length === 1 ? scope.projects[0]! : null;
    return { project: own ?? defaultProject, named: own ? "the token" : "the default project" };
  }

  /**
   * Each project's existence, once: one named by the header, the token or the default that does
   * not exist refuses the request (404, as /v1/log); one named by a resource, only its records.
   */
  async function projectProblems(
    wanted: Map<string, { named: string; fromResource: boolean }>,
  ): Promise<Map<string, string>> {
    const problems = new Map<string, string>();
    for (const [project, { named, fromResource }] of wanted) {
      if (!isName(project)) {
        const message = `${named} names "${project.slice(0, 80)}", which is not a project name (lowercase letters, digits and dashes)`;
        if (!fromResource) throw ValidationError.field("project", "invalid_string", message);
        problems.set(project, message);
        continue;
      }
      try {
        await requireProject(project);
      } catch (error) {
        if (!fromResource || !(error instanceof AppError) || error.kind !== "not_found") throw error;
        problems.set(project, error.message);
      }
    }
    return problems;
  }

  /**
   * Runs the writes, each on its own, started a few hundred per turn of the event loop (each
   * checks its input before it is queued for the group commit: ten thousand at once would hold
   * the loop); counts those refused for the request's content, rethrows any other failure. Each
   * write's outcome is taken as it is started: one refused in a batch that commits while later
   * writes are still being started would otherwise be a rejection no one handles yet, which ends
   * the process. Refuses the export, before any of it is written, when other exports' writes
   * under way fill WRITING_LIMIT.
   */
  async function writeAll(writes: (() => Promise<unknown>)[], refused: string[]): Promise<void> {
    if (writing > 0 && writing + writes.length > WRITING_LIMIT)
      throw new AppError(
        "unavailable",
        "busy",
        "Too many exports are being written at once; nothing of this one was stored. Retry in a second.",
        { retryAfter: 1 },
      );
    writing += writes.length;
    try {
      await startAll(writes, refused);
    } finally {
      writing -= writes.length;
    }
  }

  async function startAll(writes: (() => Promise<unknown>)[], refused: string[]): Promise<void> {
    const settled: Promise<PromiseSettledResult<unknown>>[] = [];
    for (const [i, write] of writes.entries()) {
      if (i > 0 && i % WRITES_PER_TURN === 0) await new Promise((resolve) => setImmediate(resolve));
      settled.push(
        write().then(
          (value) => ({ status: "fulfilled" as const, value }),
          (reason: unknown) => ({ status: "rejected" as const, reason }),
        ),
      );
    }
    for (const result of await Promise.all(settled)) {
      if (result.status === "fulfilled") continue;
      const error = result.reason;
      if (error instanceof AppError && OWN_FAULT.has(error.kind)) refused.push(error.message);
      else throw error;
    }
  }

  return {
    /** Writes the events an export's log records make (plan.ts), in the projects the token and the request name. */
    async exportLogs(
      scope: Scope,
      resources: PlannedLogs,
      header: string | null,
      now: number,
      signal?: AbortSignal,
    ): Promise<Refused> {
      assertExportSize(plannedCount(resources), "logs", scope.kind === "public");
      const refused: string[] = [];
      const wanted = new Map<string, { named: string; fromResource: boolean }>();
      const planned: { project: string; made: PlannedLogs[number]["made"][number] }[] = [];
      for (const { projectAttribute, made } of resources) {
        const { project, named } = projectOf(scope, header, projectAttribute);
        if (!wanted.has(project)) wanted.set(project, { named, fromResource: named.startsWith("the resource") });
        for (const m of made) planned.push({ project, made: m });
      }
      // The token's limits first, for everything: a request it may not make writes nothing.
      const inputs: LogInput[] = [];
      for (const { project, made } of planned) {
        if ("refused" in made) continue;
        // A public token's channel is the one refusal whose cause is OpenTelemetry's to name.
        const otherChannel = scope.kind === "public" && scope.channel !== null && scope.channel !== made.input.channel;
        inOtlpTerms(
          () => assertCanSendEvent(scope, project, made.input.channel),
          otherChannel
            ? `(A record's channel is its resource's service.name made a channel name: set service.name, or OTEL_SERVICE_NAME, to match.)`
            : "",
        );
        if (made.input.notify && made.input.timestamp === undefined)
          inOtlpTerms(
            () => assertCanNotify(scope),
            `(Here notify is the record's attribute ${NOTIFY_ATTRIBUTE}=true: send the records without it.)`,
          );
        inputs.push({ ...made.input, project });
      }
      const problems = await projectProblems(wanted);
      for (const { project, made } of planned) {
        if ("refused" in made) refused.push(made.refused);
        else if (problems.has(project)) refused.push(problems.get(project)!);
      }
      const writes = inputs
        .filter((input) => !problems.has(input.project))
        .map((input) => () => ingest.logEvent(scope, input, { signal, now }));
      await writeAll(writes, refused);
      return summary(refused, "log records");
    },

    /** Writes the metrics an export's data points make (plan.ts), in the projects the token and the request name. */
    async exportMetrics(
      scope: Scope,
      resources: PlannedMetrics,
      header: string | null,
      now: number,
      signal?: AbortSignal,
    ): Promise<Refused> {
      assertExportSize(plannedCount(resources), "metrics", scope.kind === "public");
      const refused: string[] = [];
      const wanted = new Map<string, { named: string; fromResource: boolean }>();
      const planned: { project: string; made: PlannedMetrics[number]["made"][number] }[] = [];
      for (const { projectAttribute, made } of resources) {
        const { project, named } = projectOf(scope, header, projectAttribute);
        if (!wanted.has(project)) wanted.set(project, { named, fromResource: named.startsWith("the resource") });
        for (const m of made) planned.push({ project, made: m });
      }
      for (const { project, made } of planned)
        if (!("refused" in made) && made.inputs.length) assertCanWriteProject(scope, project, "metrics");
      const problems = await projectProblems(wanted);
      // A point is refused once, however many metrics it makes (a histogram's count and sum).
      const writes: (() => Promise<unknown>)[] = [];
      for (const { project, made } of planned) {
        if ("refused" in made) refused.push(made.refused);
        else if (problems.has(project)) refused.push(problems.get(project)!);
        else if (made.inputs.length) writes.push(() => writePoint(scope, made.inputs, project, signal, now));
      }
      await writeAll(writes, refused);
      return summary(refused, "data points");
    },
  };

  /** A point's metrics, each through ingest; the point is refused when one of them is. */
  async function writePoint(
    scope: Scope,
    inputs: MetricDraft[],
    project: string,
    signal: AbortSignal | undefined,
    now: number,
  ) {
    const results = await Promise.allSettled(
      inputs.map((input) => ingest.recordMetric(scope, { ...input, project } satisfies MetricInput, { signal, now })),
    );
    const failed = results.find((r): r is PromiseRejectedResult => r.status === "rejected");
    if (failed) throw failed.reason;
  }
}

/** An access check whose refusal says, after its own words, where OpenTelemetry's records carry what it refused. */
function inOtlpTerms(check: () => void, where: string): void {
  try {
    check();
  } catch (error) {
    if (error instanceof Forbidden && where) throw new Forbidden(`${error.message} ${where}`);
    throw error;
  }
}

/** The count of what was refused, and its first few reasons (each said once). */
function summary(refused: string[], what: string): Refused {
  if (!refused.length) return { count: 0, reason: null };
  const reasons = [...new Set(refused)];
  const shown = reasons.slice(0, REASONS).join("; ");
  const more = reasons.length > REASONS ? ` (and ${reasons.length - REASONS} other reasons)` : "";
  return { count: refused.length, reason: `${refused.length} ${what} not stored: ${shown}${more}` };
}

export type OtlpService = ReturnType<typeof otlpService>;
