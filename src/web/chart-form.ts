// The chart builder's form, as it lives in the URL (so a question being built can be shared) and
// as it is posted: its fields to a chart's definition (what the API takes) and back, as each chart
// kind maps them (domain/chart-kinds/). Every field is a string, or a list of them for repeated
// fields (tag, step).
import { CHART_KIND_CHOICES, CHART_KINDS, chartKind } from "../domain/chart-kinds/index.ts";
import { type FormFields, list, one } from "../domain/chart-kinds/form.ts";
import { z } from "zod";
import { ValidationError } from "../errors.ts";
import type { Chart, ChartKind } from "../model/chart.ts";

export { type FormFields, list, one } from "../domain/chart-kinds/form.ts";

/**
 * The builder's fields in a route's `query`: every name with all its values (a route reads a record
 * of lists so), one value as itself and more as a list; tag and the steps are always lists.
 */
export const fieldsQuery = z.record(z.string(), z.array(z.string())).transform((asked) => {
  const out: FormFields = {};
  for (const [key, all] of Object.entries(asked))
    out[key] = all.length > 1 || key === "tag" || key === "step" || key === "step_channel" ? all : all[0];
  return out;
});

/** The builder's fields in a route's `form`: as posted (a field sent more than once is a list). */
export const fieldsForm = z.record(z.string(), z.union([z.string(), z.array(z.string())]));

/** The kind of chart the form asks for (series when it names none); another word is refused, naming `kind`. */
export function kindOf(f: FormFields): ChartKind {
  const kind = one(f, "kind") || "series";
  if (!(CHART_KINDS as string[]).includes(kind))
    throw ValidationError.field("kind", "invalid_value", `kind: must be ${CHART_KIND_CHOICES}`);
  return kind as ChartKind;
}

/** The definition the form describes (unchecked: the charts service checks it and names what is wrong). */
export function definitionOf(f: FormFields): Record<string, unknown> {
  return chartKind(kindOf(f)).form.definition(f);
}

/** A saved definition back to the form's fields (the edit form, links that ask the same question). */
export function fieldsOfDefinition(chart: Pick<Chart, "kind" | "definition">, name?: string): FormFields {
  return { kind: chart.kind, ...(name ? { name } : {}), ...chartKind(chart.kind).form.fields(chart.definition) };
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
