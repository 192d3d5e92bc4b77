// Alert rules: what a project expects of its events and metrics, and what a rule has seen. A rule is
// one of its kinds (domain/alert-kinds/): each has the fields it needs and no other.

export type AlertKind = "absence" | "count" | "metric";

/** Which events a rule watches: any of these may be left out (then it does not narrow). */
export type AlertFilter = { channel?: string; event?: string; tags?: Record<string, string> };

/** When an absence rule expects events: at least every `period` (ms), or when `cron` says in `tz`. */
export type AlertSchedule = { period: number } | { cron: string; tz: string };

/** Where a count or metric rule fires: above a number, or below one. */
export type Threshold = { compare: "above" | "below"; limit: number };

/**
 * What every rule has: a name, how often to notify again while it keeps firing (ms), and after how
 * many rounds firing in a row its firing notifies (1: at once; domain/quiet.ts).
 */
type SpecBase = { name: string; repeat: number | null; notifyAfter: number };

/** An event at least as often as `schedule` says, `grace` (ms) late at most. */
export type AbsenceSpec = SpecBase & { kind: "absence"; filter: AlertFilter; schedule: AlertSchedule; grace: number };
/** The events within the last `window` (ms) past a threshold. */
export type CountSpec = SpecBase & { kind: "count"; filter: AlertFilter; window: number; threshold: Threshold };
/** No filter: a rule that watches no events (its filter is empty, so that every rule has one to read). */
export type NoFilter = { [K in keyof AlertFilter]?: never };
/** A metric's value past a threshold. */
export type MetricSpec = SpecBase & { kind: "metric"; filter: NoFilter; metric: string; threshold: Threshold };

/** What a rule expects. Times in ms. */
export type AlertSpec = AbsenceSpec | CountSpec | MetricSpec;

export type AlertState = "ok" | "firing";

/** What a stored rule has beside what it expects: its project, its state and its times. */
export type AlertRecord = {
  id: number;
  projectId: number;
  paused: boolean;
  state: AlertState;
  /** When it entered its state (ms). */
  since: number;
  lastChecked: number | null;
  /** When its last notice went out (a change of state, or a repeat). */
  lastNotified: number | null;
  /** Rounds firing in a row, counted up to notifyAfter (0 while ok). */
  streak: number;
  /** What its last notice said: "firing" once its firing was told, "ok" before and once its recovery was. */
  notified: AlertState;
  createdAt: number;
  updatedAt: number;
};

export type Alert = AlertSpec & AlertRecord;

/** A stored rule of one kind. */
export type AlertOf<K extends AlertKind> = Extract<AlertSpec, { kind: K }> & AlertRecord;

export type NewAlert = AlertSpec & { projectId: number; paused: boolean };

/** A change of a rule: what it is now (the whole of it), its pause, or both. */
export type AlertChanges = (AlertSpec | { kind?: undefined }) & { paused?: boolean };

/** A rule's new state, written only if it still is in `from` (so a change happens once, whoever sees it). */
export type AlertTransition = { id: number; from: AlertMark; to: AlertMark };

/** Where a rule stands: its state, since when, when its last notice went out, its streak and what it told. */
export type AlertMark = {
  state: AlertState;
  since: number;
  lastNotified: number | null;
  streak: number;
  notified: AlertState;
};
