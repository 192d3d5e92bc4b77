// Maintenance windows: times a project expects trouble (a deploy, a backup, the nightly restart),
// when what it watches may change state without anyone being told. A window is one-off (a start
// and an end) or comes back when a cron schedule says, in a time zone, for a length. Times in ms.

export type MaintenanceSchedule =
  | { kind: "once"; startsAt: number; endsAt: number }
  | { kind: "cron"; cron: string; tz: string; length: number };

export type NewMaintenance = { projectId: number; name: string; schedule: MaintenanceSchedule };

export type Maintenance = NewMaintenance & { id: number; createdAt: number };

/** A window as the stores keep it: one column per field of either schedule (the other's null). */
export type MaintenanceRow = {
  id: number;
  projectId: number;
  name: string;
  startsAt: number | null;
  endsAt: number | null;
  cron: string | null;
  tz: string | null;
  length: number | null;
  createdAt: number;
};

export function maintenanceRow(m: NewMaintenance): Omit<MaintenanceRow, "id" | "createdAt"> {
  const s = m.schedule;
  return {
    projectId: m.projectId,
    name: m.name,
    startsAt: s.kind === "once" ? s.startsAt : null,
    endsAt: s.kind === "once" ? s.endsAt : null,
    cron: s.kind === "cron" ? s.cron : null,
    tz: s.kind === "cron" ? s.tz : null,
    length: s.kind === "cron" ? s.length : null,
  };
}

export function maintenanceOfRow(row: MaintenanceRow): Maintenance {
  const schedule: MaintenanceSchedule =
    row.cron !== null
      ? { kind: "cron", cron: row.cron, tz: row.tz ?? "UTC", length: row.length ?? 0 }
      : { kind: "once", startsAt: row.startsAt ?? 0, endsAt: row.endsAt ?? 0 };
  return { id: row.id, projectId: row.projectId, name: row.name, schedule, createdAt: row.createdAt };
}
