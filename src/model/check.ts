// Checks: a cron job or a service that reports by pinging (the Healthchecks and Uptime Kuma
// protocols), and what its pings said. The schedule and grace are in seconds, as people write them;
// times are Unix milliseconds, as everywhere else.

/** When pings are expected: at least every `seconds`, or when the cron expression `expr` says in `tz`. */
export type CheckSchedule = { kind: "period"; seconds: number } | { kind: "cron"; expr: string; tz: string };

/** new: never pinged; started: a start with no finish yet; paused: pings are logged and change nothing. */
export type CheckState = "new" | "up" | "started" | "down" | "paused";

/** The channel a check's pings go to unless it names another. */
export const CHECKS_CHANNEL = "checks";

/** What a check is, as it was made or changed. */
export type CheckSpec = {
  name: string;
  slug: string;
  schedule: CheckSchedule;
  /** Seconds a ping may be late (or a run may take) before the check is down. */
  grace: number;
  channel: string;
  /** The secret in its ping URL (/ping/<uuid>). */
  uuid: string;
  /** The secret in its Uptime Kuma push URL (/api/push/<token>), 32 characters. */
  pushToken: string;
  paused: boolean;
  /** Failures in a row (failure pings, deadlines missed) before a notice goes out (1: at once). */
  notifyAfter: number;
};

/** What its pings made of it. */
export type CheckProgress = {
  state: CheckState;
  /** When it entered its state. */
  since: number;
  /** The latest success, start, failure or exit status (a log ping is not one). */
  lastPing: number | null;
  /** The latest start, and its run id when it sent one. */
  lastStart: number | null;
  lastStartRid: string | null;
  /** Starts with a run id that no finish has closed yet (run id → when), the newest few. */
  runs: Record<string, number>;
  /** When silence makes it down; null when nothing can (new, down, paused). */
  nextDue: number | null;
  /** How long its latest finished run took (ms), from the start it closed. */
  lastDurationMs: number | null;
  /** Quiet (domain/quiet.ts): failures in a row, counted up to notifyAfter (0 while not down). */
  streak: number;
  /** What its last notice told: up (also before any) or down. */
  notified: "up" | "down";
  /** When the streak last counted a failure; the next deadline missed from then counts one more. */
  counted: number | null;
};

export type Check = CheckSpec &
  CheckProgress & {
    id: number;
    projectId: number;
    createdAt: number;
    updatedAt: number;
  };

export type NewCheck = CheckSpec & { projectId: number };

export type CheckChanges = Partial<CheckSpec> & Partial<CheckProgress>;

/** Where a check stands for a change decided elsewhere: written only if it still stands there. */
export type CheckMark = Pick<CheckProgress, "state" | "nextDue" | "streak" | "notified">;

/** How a check's ping URL may name it. */
export type CheckKey = { uuid: string } | { pushToken: string } | { projectId: number; slug: string };

/** A finished run, from its ping event: when it ended, how (success, fail, exit N), and how long it took when its start was known. */
export type CheckRun = { at: number; ok: boolean; label: string; durationMs: number | null };
