// OTLP's two encodings on the wire. Protobuf is decoded and the answers encoded by the code
// protobufjs generated from OpenTelemetry's published .proto definitions, as the npm package
// @opentelemetry/otlp-transformer ships it (imported from the package, so it is bundled into the
// compiled binary); JSON is OTLP/JSON, parsed with our body rules.
import generated from "@opentelemetry/otlp-transformer/build/src/generated/root.js";
import { Reader } from "protobufjs/minimal.js";
import { BadRequest, UnsupportedMediaType } from "../errors.ts";
import type { Refused } from "../domain/otlp/service.ts";
import { parseJson } from "../http/body.ts";

export type Signal = "logs" | "metrics";
export type Encoding = "protobuf" | "json";

/** A generated message type: as much of protobufjs's static code as is used here. */
type MessageType = {
  decode(bytes: Uint8Array): unknown;
  encode(message: Record<string, unknown>): { finish(): Uint8Array };
};
type Service = Record<string, MessageType>;

// Typed as a protobufjs Root; its static classes are plain properties.
const collector = (generated as unknown as { opentelemetry: { proto: { collector: Record<Signal, { v1: Service }> } } })
  .opentelemetry.proto.collector;

const MESSAGES: Record<Signal, { request: MessageType; response: MessageType; rejected: string }> = {
  logs: {
    request: collector.logs.v1.ExportLogsServiceRequest!,
    response: collector.logs.v1.ExportLogsServiceResponse!,
    rejected: "rejectedLogRecords",
  },
  metrics: {
    request: collector.metrics.v1.ExportMetricsServiceRequest!,
    response: collector.metrics.v1.ExportMetricsServiceResponse!,
    rejected: "rejectedDataPoints",
  },
};

export const PROTOBUF_TYPE = /^application\/x-protobuf\s*(;|$)/i;
const JSON_TYPE = /^application\/json\s*(;|$)/i;
const WANTED = "application/x-protobuf or application/json";

/** Which encoding the request is in, by its Content-Type; another is a 415. */
export function encodingOf(request: Request): Encoding {
  const type = request.headers.get("content-type");
  if (type && PROTOBUF_TYPE.test(type)) return "protobuf";
  if (type && JSON_TYPE.test(type)) return "json";
  throw new UnsupportedMediaType(type, WANTED);
}

// Field numbers in OpenTelemetry's .proto files, to count what a protobuf export holds before it
// is decoded: Export…ServiceRequest.resource_*s = 1, Resource*s.scope_*s = 2, Scope*s.log_records
// or .metrics = 2; Metric.gauge = 5, .sum = 7, .histogram = 9, .exponential_histogram = 10,
// .summary = 11, each with data_points = 1.
const LENGTH_DELIMITED = 2;
const METRIC_KINDS = new Set([5, 7, 9, 10, 11]);

/** Each length-delimited field `field` within reader.pos..end: `each` is called with the end of its bytes. */
function eachField(reader: Reader, end: number, field: number | Set<number>, each: (end: number) => void): void {
  while (reader.pos < end) {
    const tag = reader.uint32();
    const number = tag >>> 3;
    const wire = tag & 7;
    if (wire === LENGTH_DELIMITED && (typeof field === "number" ? number === field : field.has(number))) {
      const length = reader.uint32();
      const stop = reader.pos + length;
      if (stop > end) throw new RangeError("a length past the end");
      each(stop);
      reader.pos = stop;
    } else reader.skipType(wire);
  }
}

/**
 * How many log records (or data points, a metric without any counting one) a protobuf export
 * holds, counted with protobufjs's reader without decoding them: an export of two million empty
 * records is refused before two million messages are made. Null when the bytes are not protobuf
 * (decoding them says why).
 */
export function protobufCount(signal: Signal, bytes: Uint8Array): number | null {
  const reader = Reader.create(bytes);
  let count = 0;
  try {
    eachField(reader, bytes.length, 1, (resourceEnd) =>
      eachField(reader, resourceEnd, 2, (scopeEnd) =>
        eachField(reader, scopeEnd, 2, (itemEnd) => {
          if (signal === "logs") {
            count++;
            return;
          }
          let points = 0;
          eachField(reader, itemEnd, METRIC_KINDS, (kindEnd) =>
            eachField(reader, kindEnd, 1, () => {
              points++;
            }),
          );
          count += Math.max(1, points);
        }),
      ),
    );
  } catch {
    return null;
  }
  return count;
}

/** The same count in parsed OTLP/JSON, before it is read field by field; what is not of the right shape counts nothing (reading it says why). */
export function jsonCount(signal: Signal, parsed: unknown): number {
  const items = (value: unknown, key: string): unknown[] => {
    const list = value && typeof value === "object" ? (value as Record<string, unknown>)[key] : undefined;
    return Array.isArray(list) ? list : [];
  };
  const KINDS = ["gauge", "sum", "histogram", "exponentialHistogram", "summary"];
  let count = 0;
  for (const resource of items(parsed, signal === "logs" ? "resourceLogs" : "resourceMetrics"))
    for (const scope of items(resource, signal === "logs" ? "scopeLogs" : "scopeMetrics")) {
      if (signal === "logs") count += items(scope, "logRecords").length;
      else
        for (const metric of items(scope, "metrics")) {
          const points = KINDS.reduce(
            (n, kind) => n + items((metric as Record<string, unknown>)?.[kind], "dataPoints").length,
            0,
          );
          count += Math.max(1, points);
        }
    }
  return count;
}

/** The export request as its encoding holds it (a protobufjs message, or parsed JSON); a body that cannot be read is a 400. */
export function decodeExport(signal: Signal, encoding: Encoding, bytes: Uint8Array): unknown {
  if (encoding === "json") return parseJson(bytes);
  try {
    return MESSAGES[signal].request.decode(bytes);
  } catch (error) {
    throw new BadRequest(
      `The body is not a protobuf-encoded Export${signal === "logs" ? "Logs" : "Metrics"}ServiceRequest (${(error as Error).message}).`,
      "invalid_body",
    );
  }
}

const HEADERS: Record<Encoding, Record<string, string>> = {
  protobuf: { "Content-Type": "application/x-protobuf", "Access-Control-Allow-Origin": "*" },
  json: { "Content-Type": "application/json", "Access-Control-Allow-Origin": "*" },
};

/** Export…ServiceResponse in the request's encoding: empty when all was stored, else partialSuccess with the count and why. */
export function exportResponse(signal: Signal, encoding: Encoding, refused: Refused): Response {
  const { response, rejected } = MESSAGES[signal];
  const partial = refused.count ? { [rejected]: refused.count, errorMessage: refused.reason ?? "" } : null;
  if (encoding === "protobuf") {
    const bytes = response.encode(partial ? { partialSuccess: partial } : {}).finish();
    return new Response(bytes as Uint8Array<ArrayBuffer>, { headers: HEADERS.protobuf });
  }
  // OTLP/JSON writes 64-bit integers as strings (protobuf's JSON mapping).
  const body = partial ? { partialSuccess: { ...partial, [rejected]: String(refused.count) } } : {};
  return new Response(JSON.stringify(body), { headers: HEADERS.json });
}
