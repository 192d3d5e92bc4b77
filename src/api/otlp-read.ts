// Reads an OTLP export into plain records (domain/otlp/records.ts), from either encoding: the
// message protobufjs decoded, or the parsed OTLP/JSON. Both name fields in lowerCamelCase; they
// differ in how they carry 64-bit integers (a Long, or a string or number in JSON), bytes (a
// Uint8Array, or hex for ids and base64 for values in JSON) and enums (a number, or in JSON also
// the value's name). Unknown fields are ignored, as the spec asks; a field of the wrong type is a
// 400 that names where it is.
import { BadRequest } from "../errors.ts";
import type {
  AnyValue,
  Attributes,
  DataPoint,
  LogRecord,
  MetricData,
  MetricKind,
  ResourceLogs,
  ResourceMetrics,
} from "../domain/otlp/records.ts";

type Fields = Record<string, unknown>;

// AnyValue nests (lists, maps); what lies deeper than this is shown as "…".
const MAX_DEPTH = 16;

const unreadable = (path: string, what: string) =>
  new BadRequest(`The export cannot be read: ${path} ${what}.`, "invalid_body");

function fields(value: unknown, path: string): Fields | null {
  if (value === undefined || value === null) return null;
  if (typeof value !== "object" || Array.isArray(value) || value instanceof Uint8Array)
    throw unreadable(path, "must be an object");
  return value as Fields;
}

function list(value: unknown, path: string): unknown[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) throw unreadable(path, "must be a list");
  return value;
}

function text(value: unknown, path: string): string {
  if (value === undefined || value === null) return "";
  if (typeof value !== "string") throw unreadable(path, "must be a string");
  return value;
}

/** protobufjs's Long for 64-bit fields, when the `long` package is there. */
type Long = { toNumber(): number };
const isLong = (value: unknown): value is Long =>
  typeof value === "object" && value !== null && typeof (value as Partial<Long>).toNumber === "function";

/** A 64-bit integer: a Long, a number, or a string of digits; null when absent. Beyond 2^53 it is rounded. */
function int64(value: unknown, path: string): number | null {
  if (value === undefined || value === null) return null;
  if (typeof value === "number" && Number.isInteger(value)) return value;
  if (isLong(value)) return value.toNumber();
  if (typeof value === "string" && /^-?\d{1,20}$/.test(value)) return Number(value);
  throw unreadable(path, "must be a whole number (or a string of digits)");
}

/** A double: a number, or (JSON) "NaN", "Infinity", "-Infinity" or a number as a string. */
function double(value: unknown, path: string): number | null {
  if (value === undefined || value === null) return null;
  if (typeof value === "number") return value;
  if (typeof value === "string" && value.trim() !== "" && !Number.isNaN(Number(value))) return Number(value);
  if (value === "NaN") return Number.NaN;
  throw unreadable(path, "must be a number");
}

/** An enum's number; JSON may also name the value (`names`: the enum's names by number). */
function enumValue(value: unknown, names: readonly string[], path: string): number {
  if (value === undefined || value === null) return 0;
  if (typeof value === "number" && Number.isInteger(value)) return value;
  if (typeof value === "string" && names.includes(value)) return names.indexOf(value);
  throw unreadable(path, `must be one of ${names.join(", ")} or its number`);
}

/** Nanoseconds since the epoch as milliseconds; null for 0 or absent (the spec's "unknown"). */
function time(value: unknown, path: string): number | null {
  const ns = int64(value, path);
  return ns ? ns / 1e6 : null;
}

/** A trace or span id as hex: bytes in protobuf, hex in JSON; null when empty or all zero (invalid). */
function hexId(value: unknown, path: string): string | null {
  if (value === undefined || value === null) return null;
  let hex: string;
  if (value instanceof Uint8Array) hex = Buffer.from(value).toString("hex");
  else if (typeof value === "string" && /^([0-9a-fA-F]{2})*$/.test(value)) hex = value.toLowerCase();
  else throw unreadable(path, "must be an id in hexadecimal");
  return /^0*$/.test(hex) ? null : hex;
}

function anyValue(value: unknown, path: string, depth = 0): AnyValue {
  const v = fields(value, path);
  if (!v) return null;
  if (depth >= MAX_DEPTH) return "…";
  if (v.stringValue !== undefined && v.stringValue !== null) return text(v.stringValue, `${path}.stringValue`);
  if (v.boolValue !== undefined && v.boolValue !== null) {
    if (typeof v.boolValue !== "boolean") throw unreadable(`${path}.boolValue`, "must be true or false");
    return v.boolValue;
  }
  if (v.intValue !== undefined && v.intValue !== null) return int64(v.intValue, `${path}.intValue`);
  if (v.doubleValue !== undefined && v.doubleValue !== null) return double(v.doubleValue, `${path}.doubleValue`);
  if (v.bytesValue !== undefined && v.bytesValue !== null)
    return v.bytesValue instanceof Uint8Array
      ? Buffer.from(v.bytesValue).toString("base64")
      : text(v.bytesValue, `${path}.bytesValue`);
  const array = fields(v.arrayValue, `${path}.arrayValue`);
  if (array)
    return list(array.values, `${path}.arrayValue.values`).map((item, i) =>
      anyValue(item, `${path}.arrayValue.values[${i}]`, depth + 1),
    );
  const kvlist = fields(v.kvlistValue, `${path}.kvlistValue`);
  if (kvlist) {
    const out: { [key: string]: AnyValue } = Object.create(null);
    for (const [key, item] of attributes(kvlist.values, `${path}.kvlistValue.values`, depth + 1)) out[key] = item;
    return out;
  }
  return null;
}

function attributes(value: unknown, path: string, depth = 0): Attributes {
  const out: Attributes = new Map();
  list(value, path).forEach((item, i) => {
    const kv = fields(item, `${path}[${i}]`);
    if (!kv) return;
    const key = text(kv.key, `${path}[${i}].key`);
    if (!out.has(key)) out.set(key, anyValue(kv.value, `${path}[${i}].value`, depth));
  });
  return out;
}

const resourceOf = (value: unknown, path: string): Attributes =>
  attributes(fields(value, path)?.attributes, `${path}.attributes`);

/** ExportLogsServiceRequest. */
export function readLogs(request: unknown): ResourceLogs[] {
  const root = fields(request, "the body") ?? {};
  return list(root.resourceLogs, "resourceLogs").map((item, r) => {
    const at = `resourceLogs[${r}]`;
    const resourceLogs = fields(item, at) ?? {};
    const records: LogRecord[] = [];
    list(resourceLogs.scopeLogs, `${at}.scopeLogs`).forEach((scopeItem, s) => {
      const scopeAt = `${at}.scopeLogs[${s}]`;
      const scopeLogs = fields(scopeItem, scopeAt) ?? {};
      list(scopeLogs.logRecords, `${scopeAt}.logRecords`).forEach((recordItem, l) => {
        records.push(logRecord(recordItem, `${scopeAt}.logRecords[${l}]`));
      });
    });
    return { resource: resourceOf(resourceLogs.resource, `${at}.resource`), records };
  });
}

const SEVERITY_NAMES = [
  "SEVERITY_NUMBER_UNSPECIFIED",
  ...["TRACE", "DEBUG", "INFO", "WARN", "ERROR", "FATAL"].flatMap((s) =>
    ["", "2", "3", "4"].map((n) => `SEVERITY_NUMBER_${s}${n}`),
  ),
];

function logRecord(value: unknown, at: string): LogRecord {
  const r = fields(value, at) ?? {};
  return {
    time: time(r.timeUnixNano, `${at}.timeUnixNano`),
    observed: time(r.observedTimeUnixNano, `${at}.observedTimeUnixNano`),
    severityText: text(r.severityText, `${at}.severityText`),
    severityNumber: enumValue(r.severityNumber, SEVERITY_NAMES, `${at}.severityNumber`),
    body: anyValue(r.body, `${at}.body`),
    attributes: attributes(r.attributes, `${at}.attributes`),
    traceId: hexId(r.traceId, `${at}.traceId`),
    eventName: text(r.eventName, `${at}.eventName`),
  };
}

/** ExportMetricsServiceRequest. */
export function readMetrics(request: unknown): ResourceMetrics[] {
  const root = fields(request, "the body") ?? {};
  return list(root.resourceMetrics, "resourceMetrics").map((item, r) => {
    const at = `resourceMetrics[${r}]`;
    const resourceMetrics = fields(item, at) ?? {};
    const metrics: MetricData[] = [];
    list(resourceMetrics.scopeMetrics, `${at}.scopeMetrics`).forEach((scopeItem, s) => {
      const scopeAt = `${at}.scopeMetrics[${s}]`;
      const scopeMetrics = fields(scopeItem, scopeAt) ?? {};
      list(scopeMetrics.metrics, `${scopeAt}.metrics`).forEach((metricItem, m) => {
        metrics.push(metric(metricItem, `${scopeAt}.metrics[${m}]`));
      });
    });
    return { resource: resourceOf(resourceMetrics.resource, `${at}.resource`), metrics };
  });
}

const KINDS: MetricKind[] = ["gauge", "sum", "histogram", "exponentialHistogram", "summary"];
const TEMPORALITY = [
  "AGGREGATION_TEMPORALITY_UNSPECIFIED",
  "AGGREGATION_TEMPORALITY_DELTA",
  "AGGREGATION_TEMPORALITY_CUMULATIVE",
];
const DELTA = 1;
// DataPointFlags: the point marks a gap, not a value.
const NO_RECORDED_VALUE = 1;

function metric(value: unknown, at: string): MetricData {
  const m = fields(value, at) ?? {};
  const name = text(m.name, `${at}.name`);
  for (const kind of KINDS) {
    const data = fields(m[kind], `${at}.${kind}`);
    if (!data) continue;
    const delta =
      (kind === "sum" || kind === "histogram" || kind === "exponentialHistogram") &&
      enumValue(data.aggregationTemporality, TEMPORALITY, `${at}.${kind}.aggregationTemporality`) === DELTA;
    const points = list(data.dataPoints, `${at}.${kind}.dataPoints`).map((p, i) =>
      dataPoint(p, kind, `${at}.${kind}.dataPoints[${i}]`),
    );
    return { name, kind, delta, points };
  }
  return { name, kind: null, delta: false, points: [] };
}

function dataPoint(value: unknown, kind: MetricKind, at: string): DataPoint {
  const p = fields(value, at) ?? {};
  const attrs = attributes(p.attributes, `${at}.attributes`);
  const flags = int64(p.flags, `${at}.flags`) ?? 0;
  if (flags & NO_RECORDED_VALUE) return { attributes: attrs, empty: true };
  if (kind === "gauge" || kind === "sum") {
    const int = int64(p.asInt, `${at}.asInt`);
    const dbl = double(p.asDouble, `${at}.asDouble`);
    const number = dbl ?? int;
    return number === null ? { attributes: attrs, empty: true } : { attributes: attrs, value: number };
  }
  return {
    attributes: attrs,
    count: int64(p.count, `${at}.count`) ?? 0,
    sum: double(p.sum, `${at}.sum`),
  };
}
