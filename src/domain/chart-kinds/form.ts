// The chart builder's form as data: its fields (every one a string, or a list of them for repeated
// fields: tag, step) to a definition's parameters and back, for what every kind shares (the range,
// the search's filters); each kind maps its own (chart-kinds/*.ts form).
import type { ChartRange } from "../../model/chart.ts";

export type FormFields = Record<string, string | string[] | undefined>;

const DAY = 86_400;

export const one = (f: FormFields, name: string): string => {
  const v = f[name];
  return (Array.isArray(v) ? v[0] : v)?.trim() ?? "";
};
export const list = (f: FormFields, name: string): string[] => {
  const v = f[name];
  return v === undefined ? [] : Array.isArray(v) ? v : [v];
};

/** A number as typed, or the text itself when it is not one (so the definition's check names it). */
export const numberOr = (text: string): number | string =>
  text !== "" && Number.isFinite(Number(text)) ? Number(text) : text;

/** A parameter when it has a value: `{name: value}`, or nothing. */
export const set = (name: string, value: unknown) => (value === "" || value === undefined ? {} : { [name]: value });

export const str = (v: unknown): string | undefined => (v === undefined || v === null ? undefined : String(v));

/** YYYY-MM-DD at the viewer's midnight (`offset` minutes east of UTC) as Unix seconds, or the text as typed. */
function dayStart(text: string, offsetMinutes: number): number | string {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(text);
  return m ? Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3])) / 1000 - offsetMinutes * 60 : text;
}

/** The range the form says: the last N days, or from and to (days, the last included). */
export function rangeOfForm(f: FormFields): Record<string, unknown> {
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

/** A definition's range as the form's fields. */
export function formOfRange(d: ChartRange): FormFields {
  return d.from !== undefined || d.to !== undefined
    ? { range: "custom", from: isoDay(d.from), to: isoDay(typeof d.to === "number" ? d.to - DAY : d.to) }
    : { range: str(d.last_days) ?? "30" };
}

/** Unix seconds as the UTC day they fall in (YYYY-MM-DD), for a date field. */
function isoDay(seconds: unknown): string | undefined {
  return typeof seconds === "number" && Number.isFinite(seconds)
    ? new Date(seconds * 1000).toISOString().slice(0, 10)
    : undefined;
}

/** The search's filters the form says (a series and a retention grid both take them); tags typed in one box. */
export function filtersOfForm(f: FormFields): Record<string, unknown> {
  const tags = list(f, "tag")
    .flatMap((t) => t.split(/\s+(?=[a-z0-9-]{1,64}:)/))
    .map((t) => t.trim())
    .filter(Boolean);
  return {
    ...set("channel", one(f, "channel")),
    ...(tags.length ? { tag: tags } : {}),
    ...set("user_id", one(f, "user_id")),
    ...set("q", one(f, "q")),
  };
}

/** A definition's filters as the form's fields. */
export function formOfFilters(d: { channel?: string; tag?: string[]; user_id?: string; q?: string }): FormFields {
  return {
    channel: str(d.channel),
    tag: Array.isArray(d.tag) ? d.tag : undefined,
    user_id: str(d.user_id),
    q: str(d.q),
  };
}

/** The filters in words: every one it has (a chart of one plan's events must not read as a chart of all of them). */
export function describeFilters(d: { channel?: string; tag?: string[]; user_id?: string; q?: string }): string[] {
  return [
    d.channel ? `#${d.channel}` : "",
    Array.isArray(d.tag) ? d.tag.map(String).join(" ") : "",
    d.user_id ? `user ${d.user_id}` : "",
    d.q ? `words “${d.q}”` : "",
  ];
}
