// A rule as the stores keep it, one column per field of every kind (those of other kinds null), and
// as the API answers it: flat. The one place a rule is taken apart into columns and put together.
import type { Alert, AlertChanges, AlertFilter, AlertKind, AlertRecord, AlertSpec, AlertState } from "./alert.ts";

/** A rule's fields as columns (times in ms; the filter as JSON where the store keeps it as text). */
export type AlertColumns = {
  kind: AlertKind;
  name: string;
  filter: AlertFilter;
  period: number | null;
  cron: string | null;
  tz: string | null;
  grace: number;
  window: number | null;
  metric: string | null;
  above: number | null;
  below: number | null;
  repeat: number | null;
  notifyAfter: number;
};

/** A stored row: the columns, the filter as text, the state and times. */
export type AlertRow = Omit<AlertColumns, "filter"> & { filter: string } & AlertRecord;

/** A rule's fields, flat: the kind's own, and null (0 for grace) for those of the other kinds. */
export function columnsOf(spec: AlertSpec): AlertColumns {
  const threshold =
    spec.kind === "absence"
      ? { above: null, below: null }
      : {
          above: spec.threshold.compare === "above" ? spec.threshold.limit : null,
          below: spec.threshold.compare === "below" ? spec.threshold.limit : null,
        };
  const schedule = spec.kind === "absence" ? spec.schedule : null;
  return {
    kind: spec.kind,
    name: spec.name,
    filter: spec.kind === "metric" ? {} : spec.filter,
    period: schedule && "period" in schedule ? schedule.period : null,
    cron: schedule && "cron" in schedule ? schedule.cron : null,
    tz: schedule && "cron" in schedule ? schedule.tz : null,
    grace: spec.kind === "absence" ? spec.grace : 0,
    window: spec.kind === "count" ? spec.window : null,
    metric: spec.kind === "metric" ? spec.metric : null,
    ...threshold,
    repeat: spec.repeat,
    notifyAfter: spec.notifyAfter,
  };
}

/** What a change of a rule may set of where it stands beside its fields (a resume starts it afresh). */
export type AlertMarkWrite = { state: AlertState; since: number; streak: number; notified: AlertState };

/** What a store writes: columns of the rule's fields, and of its pause, state and times. */
export type AlertWrite = Partial<Omit<AlertRow, "id">>;

/** The values a store writes for a new rule or a change (a whole spec flattened; the rest as it is). */
export function alertRow(changes: AlertChanges & { projectId?: number } & Partial<AlertMarkWrite>): AlertWrite {
  const { paused, projectId, state, since, streak, notified } = changes;
  const rest = Object.fromEntries(
    Object.entries({ paused, projectId, state, since, streak, notified }).filter(([, value]) => value !== undefined),
  ) as AlertWrite;
  if (changes.kind === undefined) return rest;
  const columns = columnsOf(changes);
  return { ...rest, ...columns, filter: JSON.stringify(columns.filter) };
}

/** A stored row as the rule it is. */
export function alertOfRow(row: AlertRow): Alert {
  const { kind, name, filter, period, cron, tz, grace, window, metric, above, below, repeat, notifyAfter, ...record } =
    row;
  const threshold = { compare: above !== null ? "above" : "below", limit: above ?? below ?? 0 } as const;
  const spec: AlertSpec =
    kind === "absence"
      ? {
          kind,
          name,
          repeat,
          notifyAfter,
          filter: JSON.parse(filter) as AlertFilter,
          schedule: cron !== null ? { cron, tz: tz ?? "UTC" } : { period: period ?? 0 },
          grace,
        }
      : kind === "count"
        ? { kind, name, repeat, notifyAfter, filter: JSON.parse(filter) as AlertFilter, window: window ?? 0, threshold }
        : { kind, name, repeat, notifyAfter, filter: {}, metric: metric ?? "", threshold };
  return { ...spec, ...record };
}
