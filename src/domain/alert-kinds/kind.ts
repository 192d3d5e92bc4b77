// What an alert rule kind is: one module per kind (absence.ts, count.ts, metric.ts), registered in
// index.ts. A kind says which of the API's fields it takes and how they make its rule, what its
// check reads and how it decides, how its notices and the pages put it in words, and how the
// dashboard's form maps onto it.
import { z } from "zod";
import type { FieldIssue } from "../../errors.ts";
import type { AlertFilter, AlertKind, AlertOf, AlertSpec, Threshold } from "../../model/alert.ts";
import type { Metric } from "../../model/metric.ts";

/** A rule looks no closer than this: shorter periods, windows and repeats are refused (seconds). */
export const MIN_SECONDS = 5;
export const MAX_SECONDS = 366 * 86_400;

export const seconds = (what: string) =>
  z
    .number({ error: `must be a number of seconds` })
    .min(MIN_SECONDS, `must be at least ${MIN_SECONDS} seconds`)
    .max(MAX_SECONDS, "must be at most 366 days")
    .meta({ description: what });

export const ms = (s: number | undefined | null) => (s === undefined || s === null ? null : Math.round(s * 1000));
export const issue = (path: string, message: string): FieldIssue => ({
  path,
  type: "custom",
  message: `${path}: ${message}`,
});

/** A rule's fields as the API takes them, checked field by field (durations in seconds). */
export type AlertFields = {
  name: string;
  kind: AlertKind;
  filter?: AlertFilter;
  period?: number;
  cron?: string;
  tz?: string;
  grace?: number;
  window?: number;
  metric?: string;
  above?: number;
  below?: number;
  repeat?: number;
  notify_after?: number;
  paused?: boolean;
};

/** A check's facts, told in its notice. */
export type Facts = Record<string, number | string | null>;

/** What a rule's check found: the state it should be in, and what the notice says of it. */
export type Finding = { firing: boolean; facts: Facts };

/** What a check may read, as the runner answers it (batched over a round where it can). */
export type Reads = {
  now: number;
  /** When the runner began watching: silence before it was not watched. */
  startedAt: number;
  /** The rule's matching events in its window up to now. */
  count(): Promise<number>;
  /** When the rule's latest matching event up to now happened (null: none), as the database says. */
  latest(): Promise<number | null>;
  /** The same, as the runner follows it live for the rules that watch events as they come. */
  lastSeen(): Promise<number | null>;
  metric(title: string): Promise<Metric | null>;
};

/** A notice's name and description (the icon and tags are every kind's). */
export type Words = { event: string; description: string };

/** The dashboard's form: its fields by name, as typed. */
export type FormFields = Record<string, string>;

export type AlertKindModule<K extends AlertKind> = {
  kind: K;
  /** How the form offers it. */
  label: string;
  /** What else it takes: a filter of events, a threshold (above or below). */
  takes: { filter: boolean; threshold: boolean };
  /** Its own fields in the API (seconds), beside name, filter, above, below, repeat and paused. */
  fields: Record<string, z.ZodType>;
  /** Its rule from the API's fields (name, repeat, notify_after, filter and threshold are filled in by the caller), its problems pushed. */
  spec(
    f: AlertFields,
    issues: FieldIssue[],
  ): Omit<Extract<AlertSpec, { kind: K }>, "name" | "repeat" | "notifyAfter" | "filter" | "threshold">;
  /** Its own fields back as the API has them (seconds). */
  fieldsOf(a: AlertOf<K>): Partial<AlertFields>;
  /** Reads: its window (ms), counted for all such rules of a round at once; or whether it follows events live. */
  window?(a: AlertOf<K>): number;
  watches?: boolean;
  /** What it sees now; null when it cannot tell. */
  find(a: AlertOf<K>, reads: Reads): Promise<Finding | null>;
  /** Its notice of firing (`still`: a repeat) or of being back. */
  notice(a: AlertOf<K>, firing: boolean, still: string, facts: Facts, now: number): Words;
  /** What it expects, in words: on the page, and in the command line's RULE column. */
  describe(a: AlertOf<K>): string;
  brief(a: AlertOf<K>): string;
  /** The form's fields of its own (those of the filter and the threshold are every kind's). */
  form: {
    fields(a: AlertOf<K>, duration: (ms: number | null) => string): FormFields;
    input(f: FormFields, duration: (name: string) => number | undefined): Partial<AlertFields>;
  };
};

/** A threshold from the API's above and below, or the problem with them. */
export function thresholdOf(f: AlertFields, issues: FieldIssue[]): Threshold {
  if (f.above !== undefined && f.below !== undefined) issues.push(issue("below", "give above or below, not both"));
  if (f.above === undefined && f.below === undefined)
    issues.push(issue("above", `a ${f.kind} rule fires above or below a number: give one`));
  return f.above !== undefined ? { compare: "above", limit: f.above } : { compare: "below", limit: f.below ?? 0 };
}

/** Past its threshold: above it, or below it. */
export const beyond = (t: Threshold, value: number) => (t.compare === "above" ? value > t.limit : value < t.limit);

export const count = (n: number) => n.toLocaleString("en-US", { maximumFractionDigits: 10 });
export const at = (ms: number) => `${new Date(ms).toISOString().replace("T", " ").slice(0, 19)} UTC`;

/** Which events a rule watches, in words: "#cron “Backup done” host=db1". */
export function describeFilter(filter: AlertFilter): string {
  const parts = [
    filter.channel ? `#${filter.channel}` : "",
    filter.event ? `“${filter.event}”` : "",
    ...Object.entries(filter.tags ?? {}).map(([k, v]) => `${k}=${v}`),
  ].filter(Boolean);
  return parts.length ? parts.join(" ") : "any event of the project";
}

/** A threshold in a notice's words: "above 10". */
export const fires = (t: Threshold) => `${t.compare} ${count(t.limit)}`;
