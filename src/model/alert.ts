// Alert rules: what a project expects of its events and metrics, and what a rule has seen.

export type AlertKind = "absence" | "count" | "metric";

/** Which events a rule watches: any of these may be left out (then it does not narrow). */
export type AlertFilter = { channel?: string; event?: string; tags?: Record<string, string> };

/** What a rule expects. Times in ms; a schedule (cron) instead of a period for absence rules. */
export type AlertSpec = {
  kind: AlertKind;
  name: string;
  filter: AlertFilter;
  /** absence: an event at least this often (ms), or when `cron` says in `tz`; plus `grace` (ms). */
  period: number | null;
  cron: string | null;
  tz: string | null;
  grace: number;
  /** count: the events within the last `window` (ms). */
  window: number | null;
  /** metric: its title. */
  metric: string | null;
  /** count and metric: fires above or below (one of them). */
  above: number | null;
  below: number | null;
  /** Notify again while it keeps firing, this often (ms). */
  repeat: number | null;
};

export type AlertState = "ok" | "firing";

export type Alert = AlertSpec & {
  id: number;
  projectId: number;
  paused: boolean;
  state: AlertState;
  /** When it entered its state (ms). */
  since: number;
  lastChecked: number | null;
  /** When its last notice went out (a change of state, or a repeat). */
  lastNotified: number | null;
  createdAt: number;
  updatedAt: number;
};

export type NewAlert = AlertSpec & { projectId: number; paused: boolean };

/** A change of what a rule is, from its API or its page. */
export type AlertChanges = Partial<AlertSpec> & { paused?: boolean };

/** A rule's new state, written only if it still is in `from` (so a change happens once, whoever sees it). */
export type AlertTransition = { id: number; from: AlertMark; to: AlertMark };

/** Where a rule stands: its state, since when, and when its last notice went out. */
export type AlertMark = { state: AlertState; since: number; lastNotified: number | null };
