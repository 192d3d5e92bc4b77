// OpenTelemetry's exports (OTLP over HTTP) through ingest: each log record becomes the input
// /v1/log makes and each data point the input /v1/metric makes, and each goes through the same
// operation. A request the token may not make is refused whole before anything is written; what
// cannot be stored of an allowed one is counted and told (OTLP's partial success), the rest stored.
import type { Clock } from "../../clock.ts";
import { AppError, ValidationError } from "../../errors.ts";
import type { Scope } from "../../model/access.ts";
import { assertCanNotify, assertCanSendEvent, assertCanWriteProject } from "../access.ts";
import type { LogInput, MetricInput } from "../ingest-writes.ts";
import type { ingestService } from "../ingest.ts";
import { isName } from "../input-fields.ts";
import type { Project } from "../../model/project.ts";
import { logInputOf } from "./logs.ts";
import { metricInputsOf } from "./metrics.ts";
import { type Attributes, pointCount, type ResourceLogs, type ResourceMetrics, recordCount } from "./records.ts";

/** The resource attribute that names a project (after the token's own and the X-Signalboard-Project header). */
export const PROJECT_ATTRIBUTE = "signalboard.project";

/** What was refused of an export: how many (records or data points) and why, in a few words. */
export type Refused = { count: number; reason: string | null };

/**
 * The most log records (or data points) one export may hold, and a public token's (a web page's
 * SDK sends 512 at a time): each becomes a write of its own, so a body of a few megabytes could
 * otherwise hold two million of them. An export over it is refused whole (413), nothing stored.
 */
export const EXPORT_LIMIT = 10_000;
export const PUBLIC_EXPORT_LIMIT = 1_000;

function assertExportSize(scope: Scope, count: number, signal: "logs" | "metrics"): void {
  const what = signal === "logs" ? "log records" : "data points";
  const limit = scope.kind === "public" ? PUBLIC_EXPORT_LIMIT : EXPORT_LIMIT;
  if (count <= limit) return;
  const whose = scope.kind === "public" ? "a public token's export" : "an export";
  throw new AppError(
    "too_large",
    "payload_too_large",
    `This export holds ${count} ${what}; ${whose} holds at most ${limit}, and nothing of this one was stored. Export smaller batches: the SDK's maxExportBatchSize, or the Collector's batch processor with send_batch_max_size: ${limit}.`,
  );
}

/** How much of an export's answer the reasons take: the first few, then how many more. */
const REASONS = 3;

type Deps = {
  ingest: ReturnType<typeof ingestService>;
  requireProject: (name: string) => Promise<Project>;
  defaultProject: string;
  clock: Clock;
};

/** Errors a write makes on its own account (not the store's): the record is refused, the rest stored. */
const OWN_FAULT = new Set(["invalid", "not_found", "conflict", "rejected", "forbidden"]);

export function otlpService({ ingest, requireProject, defaultProject, clock }: Deps) {
  /**
   * The project of a resource's records: the one named (by the header, else by the resource's
   * signalboard.project), else the token's only project, else the default project. A name the
   * token does not reach is refused by the access checks, as /v1/log refuses it.
   */
  function projectOf(scope: Scope, header: string | null, resource: Attributes): { project: string; named: string } {
    const attribute = resource.get(PROJECT_ATTRIBUTE);
    if (header !== null) return { project: header, named: "the X-Signalboard-Project header" };
    if (typeof attribute === "string" && attribute !== "")
      return { project: attribute, named: `the resource attribute ${PROJECT_ATTRIBUTE}` };
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

  /** Runs the writes, each on its own; counts those refused for the request's content, rethrows any other failure. */
  async function writeAll(writes: (() => Promise<unknown>)[], refused: string[]): Promise<void> {
    const settled = await Promise.allSettled(writes.map((write) => write()));
    for (const result of settled) {
      if (result.status === "fulfilled") continue;
      const error = result.reason;
      if (error instanceof AppError && OWN_FAULT.has(error.kind)) refused.push(error.message);
      else throw error;
    }
  }

  return {
    /** Refuses (413) an export that holds more than its token may send at once; for a count made before it is read. */
    assertExportSize,

    async exportLogs(
      scope: Scope,
      resources: ResourceLogs[],
      header: string | null,
      signal?: AbortSignal,
    ): Promise<Refused> {
      assertExportSize(scope, recordCount(resources), "logs");
      const now = clock.now();
      const refused: string[] = [];
      const wanted = new Map<string, { named: string; fromResource: boolean }>();
      const planned: { project: string; made: ReturnType<typeof logInputOf> }[] = [];
      for (const { resource, records } of resources) {
        const { project, named } = projectOf(scope, header, resource);
        if (!wanted.has(project)) wanted.set(project, { named, fromResource: named.startsWith("the resource") });
        for (const record of records) planned.push({ project, made: logInputOf(record, resource, project, now) });
      }
      // The token's limits first, for everything: a request it may not make writes nothing.
      const inputs: LogInput[] = [];
      for (const { made } of planned) {
        if ("refused" in made) continue;
        assertCanSendEvent(scope, made.input.project, made.input.channel);
        if (made.input.notify && made.input.timestamp === undefined) assertCanNotify(scope);
        inputs.push(made.input);
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

    async exportMetrics(
      scope: Scope,
      resources: ResourceMetrics[],
      header: string | null,
      signal?: AbortSignal,
    ): Promise<Refused> {
      assertExportSize(scope, pointCount(resources), "metrics");
      const now = clock.now();
      const refused: string[] = [];
      const wanted = new Map<string, { named: string; fromResource: boolean }>();
      const planned: { project: string; made: ReturnType<typeof metricInputsOf> }[] = [];
      for (const { resource, metrics } of resources) {
        const { project, named } = projectOf(scope, header, resource);
        if (!wanted.has(project)) wanted.set(project, { named, fromResource: named.startsWith("the resource") });
        for (const metric of metrics) {
          if (metric.kind === null) {
            planned.push({
              project,
              made: { refused: `${metric.name || "a metric"}: holds no data points of a known kind` },
            });
            continue;
          }
          for (const point of metric.points) planned.push({ project, made: metricInputsOf(metric, point, project) });
        }
      }
      for (const { project, made } of planned)
        if (!("refused" in made) && made.inputs.length) assertCanWriteProject(scope, project, "metrics");
      const problems = await projectProblems(wanted);
      // A point is refused once, however many metrics it makes (a histogram's count and sum).
      const writes: (() => Promise<unknown>)[] = [];
      for (const { project, made } of planned) {
        if ("refused" in made) refused.push(made.refused);
        else if (problems.has(project)) refused.push(problems.get(project)!);
        else if (made.inputs.length) writes.push(() => writePoint(scope, made.inputs, signal, now));
      }
      await writeAll(writes, refused);
      return summary(refused, "data points");
    },
  };

  /** A point's metrics, each through ingest; the point is refused when one of them is. */
  async function writePoint(scope: Scope, inputs: MetricInput[], signal: AbortSignal | undefined, now: number) {
    const results = await Promise.allSettled(inputs.map((input) => ingest.recordMetric(scope, input, { signal, now })));
    const failed = results.find((r): r is PromiseRejectedResult => r.status === "rejected");
    if (failed) throw failed.reason;
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
