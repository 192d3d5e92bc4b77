// The chart builder's form, as it lives in the URL (so a question being built can be shared) and
// as it is posted: its fields to a chart's definition (what the API takes, domain/charts.ts) and
// back. Every field is a string, or a list of them for repeated fields (tag, step).
import { ValidationError } from "../errors.ts";
import type { ChartKind } from "../model/chart.ts";

export type FormFields = Record<string, string | string[] | undefined>;

const DAY = 86_400;

/** The form's fields read from a URL's query or a posted form. */
export function fieldsOf(source: URLSearchParams | Record<string, string | string[]>): FormFields {
  if (!(source instanceof URLSearchParams)) return source;
  const out: FormFields = {};
  for (const key of new Set(source.keys())) {
    const all = source.getAll(key);
    out[key] = all.length > 1 || key === "tag" || key === "step" || key === "step_channel" ? all : all[0];
  }
  return out;
}

export const one = (f: FormFields, name: string): string => {
  const v = f[name];
  return (Array.isArray(v) ? v[0] : v)?.trim() ?? "";
};
export const list = (f: FormFields, name: string): string[] => {
  const v = f[name];
  return v === undefined ? [] : Array.isArray(v) ? v : [v];
};

const KINDS: readonly string[] = ["series", "funnel", "metric", "retention"] satisfies ChartKind[];

/** The kind of chart the form asks for (series when it names none); another word is refused, naming `kind`. */
export function kindOf(f: FormFields): ChartKind {
  const kind = one(f, "kind") || "series";
  if (!KINDS.includes(kind))
    throw ValidationError.field("kind", "invalid_value", "kind: must be series, funnel, metric or retention");
  return kind as ChartKind;
}

/** A number as typed, or the text itself when it is not one (so the definition's check names it). */
const numberOr = (text: string): number | string =>
  text !== "" && Number.isFinite(Number(text)) ? Number(text) : text;

/** YYYY-MM-DD at the viewer's midnight (`offset` minutes east of UTC) as Unix seconds, or the text as typed. */
function dayStart(text: string, offsetMinutes: number): number | string {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(text);
  return m ? Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3])) / 1000 - offsetMinutes * 60 : text;
}

function rangeOf(f: FormFields): Record<string, unknown> {
  const range = one(f, "range") || "30";
  if (range !== "custom") return { last_days: numberOr(range) };
  const offset = Math.round(Number(one(f, "tzo")) || 0);
  const from = one(f, "from");
  const to = one(f, "to");
  const end = dayStart(to, offset);
  return {
    ...(from ? { from: dayStart(from, offset) } : {}),
    ...(to ? { to: typeof end === "number" ? end + DAY : end } : {}),
  };
}

/** The tag filters typed in one box ("plan:pro region:eu", or one per field), each key:value. */
function tagsOf(f: FormFields): string[] {
  return list(f, "tag")
    .flatMap((t) => t.split(/\s+(?=[a-z0-9-]{1,64}:)/))
    .map((t) => t.trim())
    .filter(Boolean);
}

/** The definition the form describes (unchecked: the charts service checks it and names what is wrong). */
export function definitionOf(f: FormFields): Record<string, unknown> {
  const kind = kindOf(f);
  const set = (name: string, value: unknown) => (value === "" || value === undefined ? {} : { [name]: value });
  if (kind === "metric") return { ...set("title", one(f, "title")), ...rangeOf(f) };
  if (kind === "funnel") {
    const channels = list(f, "step_channel");
    const steps = list(f, "step")
      .map((event, i) => ({ event: event.trim(), channel: channels[i]?.trim() ?? "" }))
      .filter((s) => s.event)
      .map((s) => (s.channel ? { event: s.event, channel: s.channel } : s.event));
    return { steps, ...set("window", numberOr(one(f, "window"))), ...rangeOf(f) };
  }
  const tags = tagsOf(f);
  // The filters a series and a retention grid both take.
  const filters = {
    ...set("channel", one(f, "channel")),
    ...(tags.length ? { tag: tags } : {}),
    ...set("user_id", one(f, "user_id")),
    ...set("q", one(f, "q")),
  };
  if (kind === "retention")
    return {
      ...set("start_event", one(f, "start_event")),
      ...set("return_event", one(f, "return_event")),
      ...filters,
      ...rangeOf(f),
      ...set("interval", one(f, "interval") || undefined),
      ...set("periods", numberOr(one(f, "periods"))),
      ...set("tz", one(f, "tz") || undefined),
    };
  const groupBy = one(f, "group_by");
  return {
    ...set("measure", one(f, "measure") === "users" ? "users" : undefined),
    ...set("event", one(f, "event")),
    ...filters,
    ...rangeOf(f),
    ...set("interval", one(f, "interval") || undefined),
    ...set("tz", one(f, "tz") || undefined),
    ...set("group_by", groupBy === "tag" ? `tag:${one(f, "group_tag")}` : groupBy || undefined),
    ...set("limit", groupBy ? numberOr(one(f, "limit")) : undefined),
    ...set("display", one(f, "display") === "bar" ? "bar" : undefined),
  };
}

const str = (v: unknown): string | undefined => (v === undefined || v === null ? undefined : String(v));

/** A saved definition back to the form's fields (the edit form, links that ask the same question). */
export function fieldsOfDefinition(kind: ChartKind, d: Record<string, unknown>, name?: string): FormFields {
  const range: FormFields =
    d.from !== undefined || d.to !== undefined
      ? { range: "custom", from: isoDay(d.from), to: isoDay(typeof d.to === "number" ? d.to - DAY : d.to) }
      : { range: str(d.last_days) ?? "30" };
  const base: FormFields = { kind, ...(name ? { name } : {}), ...range };
  if (kind === "metric") return { ...base, title: str(d.title) };
  if (kind === "funnel") {
    const steps = (Array.isArray(d.steps) ? d.steps : []) as (string | { event: string; channel?: string })[];
    return {
      ...base,
      step: steps.map((s) => (typeof s === "string" ? s : s.event)),
      step_channel: steps.map((s) => (typeof s === "string" ? "" : (s.channel ?? ""))),
      window: str(d.window),
    };
  }
  const filters: FormFields = {
    channel: str(d.channel),
    tag: Array.isArray(d.tag) ? (d.tag as string[]) : undefined,
    user_id: str(d.user_id),
    q: str(d.q),
  };
  if (kind === "retention")
    return {
      ...base,
      start_event: str(d.start_event),
      return_event: str(d.return_event),
      ...filters,
      interval: str(d.interval),
      periods: str(d.periods),
      tz: str(d.tz),
    };
  const groupBy = str(d.group_by) ?? "";
  return {
    ...base,
    measure: str(d.measure),
    event: str(d.event),
    ...filters,
    interval: str(d.interval),
    tz: str(d.tz),
    group_by: groupBy.startsWith("tag:") ? "tag" : groupBy || undefined,
    group_tag: groupBy.startsWith("tag:") ? groupBy.slice(4) : undefined,
    limit: str(d.limit),
    display: str(d.display),
  };
}

/** Unix seconds as the UTC day they fall in (YYYY-MM-DD), for a date field. */
function isoDay(seconds: unknown): string | undefined {
  return typeof seconds === "number" && Number.isFinite(seconds)
    ? new Date(seconds * 1000).toISOString().slice(0, 10)
    : undefined;
}

/**
 * The fields as a URL query (lists repeated; empty ones left out). A funnel's steps are pairs, a
 * step's channel at its step's place: only the steps named go, and their channels only up to the
 * last one chosen (an empty one before it keeps the places: that step takes any channel).
 */
export function queryOfFields(f: FormFields): string {
  const channels = list(f, "step_channel");
  const steps = list(f, "step")
    .map((event, i) => ({ event, channel: channels[i] ?? "" }))
    .filter((s) => s.event.trim() !== "");
  const lastChannel = steps.findLastIndex((s) => s.channel.trim() !== "");
  const pairs: FormFields = {
    step: steps.map((s) => s.event),
    step_channel: steps.slice(0, lastChannel + 1).map((s) => s.channel),
  };
  const search = new URLSearchParams();
  for (const [key, value] of Object.entries(f)) {
    const paired = key === "step" || key === "step_channel";
    for (const v of paired ? list(pairs, key) : value === undefined ? [] : Array.isArray(value) ? value : [value])
      if (v !== "" || paired) search.append(key, v);
  }
  const text = search.toString();
  return text ? `?${text}` : "";
}
