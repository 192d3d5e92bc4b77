// What an OTLP export holds once read (api/otlp-read.ts reads both encodings into this): plain
// values, times in milliseconds, ids in hex. Scopes are flattened away: nothing here uses them.

/** OpenTelemetry's AnyValue as plain data: a kvlist is an object, bytes are base64 text. */
export type AnyValue = string | number | boolean | null | AnyValue[] | { [key: string]: AnyValue };

/** Attributes by key; the first of a key sent twice wins (the spec says keys are unique). */
export type Attributes = Map<string, AnyValue>;

export type LogRecord = {
  /** timeUnixNano in milliseconds, null when not set (0). */
  time: number | null;
  /** observedTimeUnixNano in milliseconds, null when not set. */
  observed: number | null;
  severityText: string;
  severityNumber: number;
  body: AnyValue;
  attributes: Attributes;
  /** 32 hex digits, null when absent or all zero. */
  traceId: string | null;
  eventName: string;
};

export type ResourceLogs = { resource: Attributes; records: LogRecord[] };

/** A data point: a gauge's or sum's `value`, or a histogram's (or summary's) `count` and `sum`; null: no value recorded. */
export type DataPoint = { attributes: Attributes } & (
  | { value: number; count?: undefined; sum?: undefined }
  | { value?: undefined; count: number; sum: number | null }
  | { value?: undefined; count?: undefined; sum?: undefined; empty: true }
);

export type MetricKind = "gauge" | "sum" | "histogram" | "exponentialHistogram" | "summary";

export type MetricData = {
  name: string;
  kind: MetricKind | null;
  /** Delta temporality: each point adds to what was there. Cumulative (or a gauge): each point is the value. */
  delta: boolean;
  points: DataPoint[];
};

export type ResourceMetrics = { resource: Attributes; metrics: MetricData[] };
