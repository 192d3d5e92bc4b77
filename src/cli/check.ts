// `signalboard check`: cron jobs' and monitors' checks made from the command line as from the API
// (/v1/checks), with the same fields as flags; create prints the URLs to ping.
import { describeSchedule } from "../domain/check-notices.ts";
import type { CheckInput } from "../domain/checks.ts";
import type { Check } from "../model/check.ts";
import {
  type Command,
  configFrom,
  durationFlag as seconds,
  managementOptions,
  numberFlag as number,
  parse,
  stringFlags,
  table,
  UsageError,
  when,
  withServices,
} from "./command.ts";

const USAGE =
  "signalboard check list [--project P] | check create --project P --name N [--slug S] " +
  "[--period 1d | --cron '0 3 * * *' [--tz Europe/Berlin]] [--grace 1h] [--channel C] [--notify-after N] " +
  "[--uuid UUID] [--push-token TOKEN] [--paused] | check pause|resume|delete ID | check ping-key [--project P] [--regenerate]";

const stateOf = (c: Check) => (c.state === "down" && c.notified === "up" ? "down (not told yet)" : c.state);

export const check: Command = {
  summary: "list, create, pause, resume or delete checks (cron jobs' pings), and show a project's ping key",
  usage: USAGE,
  async run(argv) {
    const { values, positionals } = parse(argv, {
      ...managementOptions,
      ...stringFlags(
        "project",
        "name",
        "slug",
        "period",
        "grace",
        "cron",
        "tz",
        "channel",
        "notify-after",
        "uuid",
        "push-token",
      ),
      paused: { type: "boolean" },
      regenerate: { type: "boolean" },
    });
    const [action, ref] = positionals;
    const config = configFrom(values, { installed: true });
    const project = values.project ?? config.defaultProject;
    return withServices(config, values, async ({ checks }) => {
      if (action === "list") {
        const rows = (await checks.list(project)).map((c) => [
          String(c.id),
          c.name,
          c.slug,
          describeSchedule(c),
          c.paused ? "paused" : stateOf(c),
          when(c.lastPing),
          c.uuid,
        ]);
        console.log(table([["ID", "NAME", "SLUG", "SCHEDULE", "STATE", "LAST PING", "UUID"], ...rows]));
        return 0;
      }
      if (action === "create") {
        const input = {
          project,
          name: values.name,
          slug: values.slug,
          period: seconds("period", values.period),
          grace: seconds("grace", values.grace),
          cron: values.cron,
          tz: values.tz,
          channel: values.channel,
          notify_after: number("notify-after", values["notify-after"]),
          uuid: values.uuid,
          push_token: values["push-token"],
          paused: values.paused,
        };
        const made = await checks.create(JSON.parse(JSON.stringify(input)) as CheckInput);
        const urls = await checks.urls(made);
        const after = made.notifyAfter > 1 ? `, notifies after ${made.notifyAfter} failures in a row` : "";
        console.log(
          `Created check ${made.id} "${made.name}" (${made.slug}: ${describeSchedule(made)})${after}${made.paused ? ", paused" : ""}.`,
        );
        console.log(`Ping URL: ${urls.ping}`);
        console.log(`By slug:  ${urls.slug}`);
        console.log(`Push URL: ${urls.push}`);
        return 0;
      }
      if (action === "ping-key") {
        const key = values.regenerate ? await checks.regeneratePingKey(project) : await checks.pingKey(project);
        console.log(
          `Ping key of ${project}: ${key}${values.regenerate ? " (made anew: the old one's URLs answer 404)" : ""}`,
        );
        console.log(`Slug URLs: ${config.baseUrl}/ping/${key}/<slug>`);
        return 0;
      }
      if (!ref || !/^\d+$/.test(ref))
        throw new UsageError("expected list, create, ping-key, or pause|resume|delete with a check's id");
      const id = Number(ref);
      if (action === "pause" || action === "resume") {
        const changed = await checks.update(id, { paused: action === "pause" });
        console.log(
          `Check ${changed.id} "${changed.name}" is ${changed.paused ? "paused: its pings are logged and change nothing" : "watched again from its next ping"}.`,
        );
        return 0;
      }
      if (action === "delete") {
        const gone = await checks.get(id);
        await checks.remove(id);
        console.log(`Deleted check ${id} "${gone.name}"; its URLs answer 404, its pings' events stay.`);
        return 0;
      }
      throw new UsageError("expected list, create, pause, resume, delete or ping-key");
    });
  },
};
