// The alert rule kinds, one line each: the API, the form, the command line and the runner read
// this list. A new kind is a module beside these (kind.ts says what it holds) and a line here.
import type { Alert, AlertKind } from "../../model/alert.ts";
import { absence } from "./absence.ts";
import { countKind } from "./count.ts";
import type { AlertKindModule } from "./kind.ts";
import { metric } from "./metric.ts";

export const ALERT_KIND_MODULES = {
  absence,
  count: countKind,
  metric,
} satisfies { [K in AlertKind]: AlertKindModule<K> };

export const ALERT_KINDS = Object.keys(ALERT_KIND_MODULES) as AlertKind[];

/** A kind, to be asked about a rule of it (or about what a form or the API says of one). */
export const kindOf = (a: Alert | { kind: AlertKind }) => ALERT_KIND_MODULES[a.kind] as AlertKindModule<AlertKind>;

type Both<U> = (U extends unknown ? (x: U) => void : never) extends (x: infer I) => void ? I : never;

/** Every kind's own fields in the API, in the kinds' order. */
export const KIND_FIELDS = Object.assign({}, ...ALERT_KINDS.map((k) => ALERT_KIND_MODULES[k].fields)) as Both<
  (typeof ALERT_KIND_MODULES)[AlertKind]["fields"]
>;
