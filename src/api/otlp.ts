// OpenTelemetry's OTLP over HTTP: POST /otlp/v1/logs and /otlp/v1/metrics, so an SDK or a
// collector pointed at {BASE_URL}/otlp sends here. Protobuf (most SDKs' default) or JSON, gzipped
// or not; answered with the Export…ServiceResponse in the request's encoding, its partialSuccess
// counting and telling what was not stored. Errors (400, 401, 403, 404, 413, 415, 429 and 503 with
// Retry-After) are the API's JSON errors to a JSON export, a protobuf google.rpc.Status to a protobuf one.
import { OtlpDecoder } from "./otlp-decode.ts";
import { type Encoding, encodingOf, exportResponse, PROTOBUF_TYPE, type Signal } from "./otlp-wire.ts";
import { Writer } from "protobufjs/minimal.js";
import type { AppError } from "../errors.ts";
import { errorHeaders, statusOf } from "../http/errors.ts";
import { API_HEADERS } from "../http/on-error.ts";
import { readBytesEncoded } from "../http/body.ts";
import type { Edge } from "../http/edge.ts";
import { type Route, route } from "../http/routes.ts";
import type { Services } from "../services.ts";

/** The header that names the project, after the token's own project and before the resource attribute. */
const PROJECT_HEADER = "x-signalboard-project";

const DESCRIPTION = {
  logs: "OTLP/HTTP logs (protobuf or JSON, optionally gzipped). Each log record becomes an event: project from the token's only project, else the X-Signalboard-Project header, else the resource attribute signalboard.project, else the default project; channel from service.name; name the body's first line; description the body; tags from the record's scalar attributes, severity and trace-id; user_id from enduser.id; notify with signalboard.notify=true. Answers ExportLogsServiceResponse in the request's encoding, with partialSuccess when records were not stored.",
  metrics:
    "OTLP/HTTP metrics (protobuf or JSON, optionally gzipped). A gauge's data point sets the metric, a sum's adds to it (delta) or sets it (cumulative); a histogram is kept as NAME.count and NAME.sum. The title is the name and the point's attributes. Answers ExportMetricsServiceResponse in the request's encoding, with partialSuccess when data points were not stored.",
};

export function otlpRoutes({ otlp, config, clock }: Services, { guard }: Edge): Route[] {
  const decoder = new OtlpDecoder();
  const exportRoute = (signal: Signal): Route =>
    route({
      method: "POST",
      path: `/otlp/v1/${signal}`,
      access: "token",
      cors: true,
      metered: true,
      doc: {
        summary: signal === "logs" ? "Export OpenTelemetry logs" : "Export OpenTelemetry metrics",
        description: DESCRIPTION[signal],
        example: {
          partialSuccess: {
            [signal === "logs" ? "rejectedLogRecords" : "rejectedDataPoints"]: "1",
            errorMessage: `1 ${signal === "logs" ? "log records" : "data points"} not stored: Project "shop" does not exist. Create it in the dashboard or with: signalboard project create shop`,
          },
        },
      },
      async handle({ request, scope }) {
        const encoding: Encoding = encodingOf(request);
        const setting = "SIGNALBOARD_OTLP_BODY_LIMIT";
        const { bytes, gzip } = await readBytesEncoded(request, config.otlpBodyLimit, setting);
        await guard.recheck(scope); // the token may have been revoked while the body came in
        const now = clock.now();
        const job = {
          encoding,
          bytes,
          gzip,
          limit: config.otlpBodyLimit,
          setting,
          publicToken: scope.kind === "public",
          now,
        };
        const project = request.headers.get(PROJECT_HEADER)?.trim() || null;
        const refused =
          signal === "logs"
            ? await otlp.exportLogs(
                scope,
                await decoder.plan({ ...job, signal }, request.signal),
                project,
                now,
                request.signal,
              )
            : await otlp.exportMetrics(
                scope,
                await decoder.plan({ ...job, signal }, request.signal),
                project,
                now,
                request.signal,
              );
        return exportResponse(signal, encoding, refused);
      },
    });

  return [exportRoute("logs"), exportRoute("metrics")];
}

const ERROR_INFO = "type.googleapis.com/google.rpc.ErrorInfo";
/** An exporter's paths: ours, and those of one pointed at the wrong place (told where to send by the error's message). */
const EXPORTER_PATH = /^\/otlp(\/|$)|\/v1\/(logs|metrics|traces)\/?$/;

/**
 * An error answered to a protobuf export (or to an exporter posting protobuf to a wrong path), as OTLP/HTTP asks: a google.rpc.Status in protobuf whose
 * message (field 2) is the error's, with one detail (field 3), a google.rpc.ErrorInfo packed in a
 * google.protobuf.Any, whose reason is the API's error code (`invalid_body`, `rate_limited`...);
 * its code (field 1), which the spec does not use, is left out. Null for any other request: JSON
 * exports get the API's JSON error, whose `message` is the one a JSON-encoded Status carries.
 */
export function protobufError(error: AppError, request: Request): Response | null {
  if (request.method !== "POST" || !EXPORTER_PATH.test(new URL(request.url).pathname)) return null;
  if (!PROTOBUF_TYPE.test(request.headers.get("content-type") ?? "")) return null;
  const text = (field: number) => (field << 3) | 2; // a length-delimited field's tag
  const errorInfo = Writer.create().uint32(text(1)).string(error.code).uint32(text(2)).string("signalboard").finish();
  const any = Writer.create().uint32(text(1)).string(ERROR_INFO).uint32(text(2)).bytes(errorInfo).finish();
  const status = Writer.create().uint32(text(2)).string(error.message).uint32(text(3)).bytes(any).finish();
  return new Response(status as Uint8Array<ArrayBuffer>, {
    status: statusOf(error),
    headers: { ...API_HEADERS, "Content-Type": "application/x-protobuf", ...errorHeaders(error) },
  });
}
