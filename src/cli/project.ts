import {
  type Command,
  configFrom,
  managementOptions,
  parse,
  table,
  UsageError,
  when,
  withServices,
} from "./command.ts";

export const project: Command = {
  summary: "create, list or delete projects",
  usage:
    "signalboard project create NAME | project list | project delete NAME --yes | project retention NAME [DAYS|off]",
  async run(argv) {
    const { values, positionals } = parse(argv, { ...managementOptions, yes: { type: "boolean" } });
    const [action, name] = positionals;
    const config = configFrom(values, { installed: true });
    return withServices(config, values, async ({ projects }) => {
      if (action === "create" && name) {
        const created = await projects.create(name);
        console.log(`Created project "${created.name}".`);
        return 0;
      }
      if (action === "list") {
        const rows = await Promise.all(
          (await projects.list()).map(async (p) => [
            p.name,
            String((await projects.channels(p.name)).length),
            String(await projects.eventCount(p.name)),
            p.retentionDays ? days(p.retentionDays) : "forever",
            when(p.createdAt),
          ]),
        );
        console.log(table([["NAME", "CHANNELS", "EVENTS", "KEEPS EVENTS", "CREATED"], ...rows]));
        return 0;
      }
      if (action === "delete" && name) {
        const events = await projects.eventCount(name);
        if (!values.yes)
          throw new UsageError(`deleting project "${name}" also deletes its ${events} events; add --yes to confirm`);
        await projects.deleteProject(name);
        console.log(`Deleted project "${name}" and its ${events} events.`);
        return 0;
      }
      if (action === "retention" && name && positionals[2]) {
        const value = positionals[2];
        if (value !== "off" && !/^\d+$/.test(value)) throw new UsageError("retention takes a number of days, or off");
        const updated = await projects.setRetention(name, value === "off" ? null : Number(value));
        console.log(keeps(name, updated.retentionDays));
        return 0;
      }
      if (action === "retention" && name) {
        const { project: p, lastRun } = await projects.retention(name);
        console.log(keeps(name, p.retentionDays));
        if (!lastRun)
          console.log(
            "Retention has not run on this database yet: a running server runs it 30 seconds after it starts, then every hour.",
          );
        else
          console.log(
            `Retention last ran at ${when(lastRun.at)} UTC${p.retentionDays ? ` and deleted ${lastRun.deleted} of its events` : ""}; it runs every hour while a server runs.`,
          );
        return 0;
      }
      throw new UsageError("expected create NAME, list, delete NAME or retention NAME [DAYS|off]");
    });
  },
};

const days = (n: number) => `${n} ${n === 1 ? "day" : "days"}`;

const keeps = (name: string, retentionDays: number | null) =>
  retentionDays
    ? `Project "${name}" keeps events for ${days(retentionDays)}; older ones are deleted hourly.`
    : `Project "${name}" keeps events forever.`;
