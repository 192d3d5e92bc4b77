// `signalboard hook`: a project's inbound webhooks from the shell, through the same service as the
// dashboard and /v1/hooks, on the server's database. Secrets are taken, never shown; the URL to
// paste into the service is printed on its own last line when a hook is added.
import { HOOK_KIND_MODULES } from "../domain/hook-kinds/index.ts";
import { HOOK_KINDS } from "../model/hook.ts";
import { type Command, configFrom, managementOptions, parse, table, UsageError, withServices } from "./command.ts";

const USAGE =
  "signalboard hook list [--project P] | hook add --project P --kind stripe|github|alertmanager|generic --name NAME [--secret S] [--channel C] [--config JSON] | hook remove ID";

/** Names are typed by dashboard users: control characters would reach the operator's terminal. */
const printable = (text: string) => text.replace(/[\u0000-\u001f\u007f-\u009f]/g, "?");

function json(text: string | undefined): unknown {
  if (text === undefined) return undefined;
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new UsageError(
      `--config takes JSON, such as '{"mapping": {"event": "$.title"}}': ${(error as Error).message}`,
    );
  }
}

export const hook: Command = {
  summary: `list, add or remove a project's inbound webhooks (${HOOK_KINDS.join(", ")})`,
  usage: USAGE,
  async run(argv) {
    const { values, positionals } = parse(argv, {
      ...managementOptions,
      project: { type: "string" },
      kind: { type: "string" },
      name: { type: "string" },
      secret: { type: "string" },
      channel: { type: "string" },
      config: { type: "string" },
    });
    const [action, id, ...extra] = positionals;
    if (extra.length) throw new UsageError(`unexpected argument "${extra[0]}"`);
    const config = configFrom(values, { installed: true });
    if (action === "add") {
      for (const flag of ["project", "kind", "name"] as const)
        if (!values[flag]) throw new UsageError(`--${flag} is required`);
    } else if (action === "remove") {
      if (!id) throw new UsageError("hook remove takes a hook's id (as hook list shows it)");
    } else if (action !== "list") throw new UsageError("expected list, add or remove ID");
    const input =
      action === "add"
        ? {
            project: values.project!,
            kind: values.kind as (typeof HOOK_KINDS)[number],
            name: values.name!,
            secret: values.secret,
            channel: values.channel,
            config: json(values.config) as Record<string, unknown> | undefined,
          }
        : null;
    return withServices(config, values, async ({ hooks }) => {
      if (action === "list") {
        const rows = (await hooks.list(values.project ?? config.defaultProject)).map((h) => [
          h.id,
          printable(h.name),
          HOOK_KIND_MODULES[h.kind].label,
          h.channel,
          h.secret === null ? "no" : "yes",
          hooks.url(h),
        ]);
        console.log(table([["ID", "NAME", "KIND", "CHANNEL", "SECRET", "URL"], ...rows]));
        return 0;
      }
      if (input) {
        const made = await hooks.create(input);
        console.log(
          `Added ${HOOK_KIND_MODULES[made.kind].label} hook "${printable(made.name)}" to ${input.project}, id ${made.id}; its events go to the ${made.channel} channel.`,
        );
        console.log("Its URL, to paste into the service:");
        console.log(hooks.url(made));
        return 0;
      }
      const gone = await hooks.get(id!);
      await hooks.remove(id!);
      console.log(`Removed hook ${gone.id} "${printable(gone.name)}": its URL answers 404 from now on.`);
      return 0;
    });
  },
};
