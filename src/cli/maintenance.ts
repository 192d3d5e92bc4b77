import { describeSchedule, type MaintenanceInput, standing } from "../domain/maintenance.ts";
import type { Maintenance } from "../model/maintenance.ts";
import {
  type Command,
  configFrom,
  durationFlag,
  managementOptions,
  parse,
  table,
  UsageError,
  when,
  withServices,
} from "./command.ts";

const USAGE =
  "signalboard maintenance list [--project P] | maintenance create --project P [--name N] " +
  "(--start TIME --end TIME | --cron '0 3 * * *' [--tz Europe/Berlin] --length 1h) | maintenance delete ID " +
  "(TIME: Unix seconds or an ISO 8601 time such as 2026-12-01T03:00:00Z)";

/** A time as the API takes it (Unix seconds): given so, or as an ISO 8601 date and time. */
function time(flag: string, text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  if (/^\d+(\.\d+)?$/.test(text.trim())) return Number(text);
  const parsed = Date.parse(text);
  if (Number.isNaN(parsed))
    throw new UsageError(
      `--${flag} takes Unix seconds or an ISO 8601 time such as 2026-12-01T03:00:00Z; got "${text}"`,
    );
  return parsed / 1000;
}

/** Whether it holds now, or when it comes next. */
function status(w: Maintenance, now: number): string {
  const { active, next } = standing(w, now);
  if (active) return `now, until ${when(next?.end)}`;
  return next ? `next ${when(next.start)}` : "over";
}

export const maintenance: Command = {
  summary: "list, create or delete maintenance windows (alert rules and checks notify nobody inside one)",
  usage: USAGE,
  async run(argv) {
    const { values, positionals } = parse(argv, {
      ...managementOptions,
      project: { type: "string" },
      name: { type: "string" },
      start: { type: "string" },
      end: { type: "string" },
      cron: { type: "string" },
      tz: { type: "string" },
      length: { type: "string" },
    });
    const [action, ref] = positionals;
    const config = configFrom(values, { installed: true });
    return withServices(config, values, async ({ maintenance: windows }) => {
      if (action === "list") {
        const now = windows.now();
        const rows = (await windows.list(values.project ?? config.defaultProject)).map((w) => [
          String(w.id),
          w.name || "-",
          describeSchedule(w),
          status(w, now),
        ]);
        console.log(table([["ID", "NAME", "WHEN", "STATUS"], ...rows]));
        return 0;
      }
      if (action === "create") {
        const input = {
          project: values.project ?? config.defaultProject,
          name: values.name,
          starts_at: time("start", values.start),
          ends_at: time("end", values.end),
          cron: values.cron,
          tz: values.tz,
          length: durationFlag("length", values.length),
        };
        const made = await windows.create(JSON.parse(JSON.stringify(input)) as MaintenanceInput);
        console.log(
          `Created maintenance window ${made.id}${made.name ? ` "${made.name}"` : ""}: ${describeSchedule(made)} (${status(made, windows.now())}).`,
        );
        return 0;
      }
      if (action === "delete") {
        if (!ref || !/^\d+$/.test(ref)) throw new UsageError("expected delete with a window's id");
        await windows.remove(Number(ref));
        console.log(`Deleted maintenance window ${ref}.`);
        return 0;
      }
      throw new UsageError("expected list, create or delete");
    });
  },
};
