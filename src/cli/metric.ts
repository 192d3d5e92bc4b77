import { clientFrom, clientOptions, postJson, scalar } from "./client.ts";
import { type Command, parse, UsageError } from "./command.ts";

export const metric: Command = {
  summary: "set or increment a metric on a running server",
  usage: "signalboard metric --title T --value V [--increment] [--project P] [--icon 📈] [--url URL] [--token TOKEN]",
  async run(argv) {
    const { values } = parse(argv, {
      ...clientOptions,
      title: { type: "string" },
      value: { type: "string" },
      increment: { type: "boolean" },
      project: { type: "string" },
      icon: { type: "string" },
    });
    if (!values.title || values.value === undefined) throw new UsageError("--title and --value are required");
    const client = clientFrom(values);
    const value = scalar(values.value);
    await postJson(client, "/send-metric", { title: values.title, value: typeof value === "boolean" ? values.value : value, increment: values.increment ?? false, project: values.project, icon: values.icon });
    console.log(`${values.increment ? "Incremented" : "Set"} metric "${values.title}".`);
    return 0;
  },
};
