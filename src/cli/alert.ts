import { kindOf } from "../domain/alert-kinds/index.ts";
import type { AlertInput } from "../domain/alerts.ts";
import type { Alert } from "../model/alert.ts";
import { parseTags } from "./client.ts";
import {
  type Command,
  configFrom,
  durationFlag as seconds,
  managementOptions,
  numberFlag as number,
  parse,
  table,
  UsageError,
  when,
  withServices,
} from "./command.ts";

const USAGE =
  "signalboard alert list [--project P] | alert create --project P --name N --kind absence|count|metric [--channel C] [--event E] [--tag key=value ...] " +
  "[--period 1d] [--grace 10m] [--cron '0 3 * * *' [--tz Europe/Berlin]] [--window 5m] [--metric TITLE] [--above N | --below N] [--repeat 1h] [--notify-after N] [--paused] | alert pause|resume|test|delete ID";

/** What a rule expects, in its kind's words. */
const describe = (a: Alert) => kindOf(a).brief(a);

export const alert: Command = {
  summary: "list, create, pause, resume, test or delete alert rules",
  usage: USAGE,
  async run(argv) {
    const { values, positionals } = parse(argv, {
      ...managementOptions,
      project: { type: "string" },
      name: { type: "string" },
      kind: { type: "string" },
      channel: { type: "string" },
      event: { type: "string" },
      tag: { type: "string", multiple: true },
      period: { type: "string" },
      grace: { type: "string" },
      cron: { type: "string" },
      tz: { type: "string" },
      window: { type: "string" },
      metric: { type: "string" },
      above: { type: "string" },
      below: { type: "string" },
      repeat: { type: "string" },
      "notify-after": { type: "string" },
      paused: { type: "boolean" },
    });
    const [action, ref] = positionals;
    const config = configFrom(values, { installed: true });
    return withServices(config, values, async ({ alerts }) => {
      if (action === "list") {
        const project = values.project ?? config.defaultProject;
        const rows = (await alerts.list(project)).map((a) => [
          String(a.id),
          a.name,
          a.kind,
          describe(a),
          a.paused ? "paused" : a.state,
          when(a.since),
          when(a.lastChecked),
        ]);
        console.log(table([["ID", "NAME", "KIND", "RULE", "STATE", "SINCE", "LAST CHECKED"], ...rows]));
        return 0;
      }
      if (action === "create") {
        const tags = parseTags(values.tag);
        const filter = {
          channel: values.channel,
          event: values.event,
          ...(tags ? { tags: Object.fromEntries(Object.entries(tags).map(([k, v]) => [k, String(v)])) } : {}),
        };
        const input = {
          project: values.project ?? config.defaultProject,
          name: values.name,
          kind: values.kind,
          filter,
          period: seconds("period", values.period),
          grace: seconds("grace", values.grace),
          cron: values.cron,
          tz: values.tz,
          window: seconds("window", values.window),
          metric: values.metric,
          above: number("above", values.above),
          below: number("below", values.below),
          repeat: seconds("repeat", values.repeat),
          notify_after: number("notify-after", values["notify-after"]),
          paused: values.paused,
        };
        const made = await alerts.create(JSON.parse(JSON.stringify(input)) as AlertInput);
        const after = made.notifyAfter > 1 ? `, notifies after ${made.notifyAfter} rounds firing` : "";
        console.log(
          `Created alert rule ${made.id} "${made.name}" (${made.kind}: ${describe(made)})${after}${made.paused ? ", paused" : ""}.`,
        );
        return 0;
      }
      const id = Number(ref);
      if (!ref || !/^\d+$/.test(ref))
        throw new UsageError("expected list, create, or pause|resume|test|delete with a rule's id");
      if (action === "pause" || action === "resume") {
        const changed = await alerts.update(id, { paused: action === "pause" });
        console.log(`Alert rule ${changed.id} "${changed.name}" is ${changed.paused ? "paused" : "watching again"}.`);
        return 0;
      }
      if (action === "test") {
        const rule = await alerts.get(id);
        const event = await alerts.runner.test(rule);
        console.log(`Sent a test notice of "${rule.name}" (event ${event.id} in the alerts channel).`);
        return 0;
      }
      if (action === "delete") {
        const rule = await alerts.get(id);
        await alerts.remove(id);
        console.log(`Deleted alert rule ${id} "${rule.name}"; its past notices stay in the alerts channel.`);
        return 0;
      }
      throw new UsageError("expected list, create, pause, resume, test or delete");
    });
  },
};
