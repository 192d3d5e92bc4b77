// `signalboard integration`: a project's integrations from the shell, through the same service as
// the dashboard and /v1/integrations, on the server's database (a running server sends what is
// queued, tests included). Secrets show masked, as everywhere; a webhook's generated signing
// secret is printed once, on its own last line.
import { destination } from "../domain/integration-kinds/configs.ts";
import { KINDS } from "../domain/integration-kinds/registry.ts";
import { describeFilter } from "../domain/routing.ts";
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

const USAGE =
  "signalboard integration list [--project P] | integration add --project P --kind KIND --name NAME --config JSON [--filter JSON] [--title TEMPLATE] [--body TEMPLATE] | integration remove ID | integration test ID";

function json(flag: string, text: string | undefined): unknown {
  if (text === undefined) return undefined;
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new UsageError(`${flag} takes JSON, such as '{"chat_id": "-100123"}': ${(error as Error).message}`);
  }
}

const idOf = (id: string | undefined, action: string): number => {
  if (id === undefined || !/^\d{1,9}$/.test(id))
    throw new UsageError(
      `integration ${action} takes an integration's id (a number that integration list shows)${id === undefined ? "" : `, got "${id}"`}`,
    );
  return Number(id);
};

/** Names are typed by dashboard users: control characters would reach the operator's terminal. */
const printable = (text: string) => text.replace(/[\u0000-\u001f\u007f-\u009f]/g, "?");

export const integration: Command = {
  summary:
    "list, add, remove or test a project's integrations (e-mail, Telegram, Gotify, Pushover, Matrix, webhook, ntfy, Discord, Slack)",
  usage: USAGE,
  async run(argv) {
    const { values, positionals } = parse(argv, {
      ...managementOptions,
      project: { type: "string" },
      kind: { type: "string" },
      name: { type: "string" },
      config: { type: "string" },
      filter: { type: "string" },
      title: { type: "string" },
      body: { type: "string" },
    });
    const [action, id, ...extra] = positionals;
    if (extra.length) throw new UsageError(`unexpected argument "${extra[0]}"`);
    const config = configFrom(values, { installed: true });
    if (action === "add") {
      for (const flag of ["project", "kind", "name", "config"] as const)
        if (!values[flag]) throw new UsageError(`--${flag} is required`);
    } else if (action !== "list" && action !== "remove" && action !== "test")
      throw new UsageError("expected list, add, remove ID or test ID");
    const template =
      values.title !== undefined || values.body !== undefined ? { title: values.title, body: values.body } : undefined;
    const input =
      action === "add"
        ? {
            project: values.project,
            kind: values.kind,
            name: values.name,
            config: json("--config", values.config),
            filter: json("--filter", values.filter),
            template,
          }
        : null;
    const target = action === "remove" || action === "test" ? idOf(id, action) : null;
    return withServices(config, values, async ({ integrations }) => {
      if (action === "list") {
        const rows = (await integrations.list(values.project ?? config.defaultProject)).map((i) => [
          String(i.id),
          printable(i.name),
          KINDS[i.kind].label,
          printable(destination(i.kind, i.config)),
          describeFilter(i.filter),
          i.enabled ? "yes" : "no",
          when(i.lastSuccessAt),
          i.lastErrorAt && (i.lastSuccessAt ?? 0) < i.lastErrorAt
            ? `${when(i.lastErrorAt)} ${printable(i.lastError ?? "")}`
            : "-",
        ]);
        console.log(
          table([["ID", "NAME", "KIND", "SENDS TO", "GETS", "ENABLED", "LAST SUCCESS", "LAST ERROR"], ...rows]),
        );
        return 0;
      }
      if (input) {
        const created = await integrations.create(input);
        const i = created.integration;
        console.log(
          `Added ${KINDS[i.kind].label} integration "${printable(i.name)}" to ${i.project}, id ${i.id}; it gets ${describeFilter(i.filter)}.`,
        );
        console.log(`Settings: ${JSON.stringify(i.config)}`);
        if (created.secret) {
          console.log("Its signing secret, shown only this once:");
          console.log(created.secret);
        }
        return 0;
      }
      if (action === "remove") {
        const gone = await integrations.get(target!);
        await integrations.remove(target!);
        console.log(
          `Removed integration ${gone.id} "${printable(gone.name)}" of ${gone.project}, with its stored secrets.`,
        );
        return 0;
      }
      await integrations.sendTest(target!, config.baseUrl);
      console.log(
        `Test queued for integration ${target}; a running server sends it within seconds (see integration list for the outcome).`,
      );
      return 0;
    });
  },
};
