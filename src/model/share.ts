// Shared pages: a project shown to people without an account, at /s/<key>. A dashboard share shows
// the chosen cards (charts, funnels, metric charts, retention grids); a status page the chosen
// checks and alert rules (their state and the last 90 days, days of its time zone) and metrics
// (their value now), with a title and a short text. The key is the capability: whoever holds the
// link sees that, and nothing beyond it. Times are Unix ms.

export type ShareKind = "dashboard" | "status";

/** What a share shows: chart ids (dashboard), check and alert rule ids and metric titles (status). */
export type ShareChoice = { charts: number[]; checks: number[]; alerts: number[]; metrics: string[] };

export type NewShare = ShareChoice & {
  projectId: number;
  kind: ShareKind;
  key: string;
  title: string;
  text: string;
  /** A status page's days are this zone's (an IANA name, "UTC" unless chosen); a dashboard's is "UTC". */
  timeZone: string;
  /** Who made it: a username, or a token's name. */
  createdBy: string;
};

export type Share = NewShare & { id: number; createdAt: number; revokedAt: number | null };

/** A stored row: the chosen ids as JSON text. */
export type ShareRow = Omit<Share, keyof ShareChoice | "kind"> & {
  kind: string;
  charts: string;
  checks: string;
  alerts: string;
  metrics: string;
};

export const shareOfRow = (row: ShareRow): Share => ({
  ...row,
  kind: row.kind === "status" ? "status" : "dashboard",
  charts: JSON.parse(row.charts) as number[],
  checks: JSON.parse(row.checks) as number[],
  alerts: JSON.parse(row.alerts) as number[],
  metrics: JSON.parse(row.metrics) as string[],
});

export const shareRow = (s: NewShare) => ({
  ...s,
  charts: JSON.stringify(s.charts),
  checks: JSON.stringify(s.checks),
  alerts: JSON.stringify(s.alerts),
  metrics: JSON.stringify(s.metrics),
});
