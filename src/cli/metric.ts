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
    const answer = await postJson(client, "/send-metric", {
      title: values.title,
      value: typeof value === "boolean" ? values.value : value,
      increment: values.increment ?? false,
      project: values.project,
      icon: values.icon,
    });
    const now = JSON.stringify(answer.value); // the value as stored (a server before 0.2.0 does not say)
    const where = typeof answer.project === "string" ? ` in ${answer.project}` : "";
    if (values.increment)
      console.log(
        `Incremented metric "${values.title}"${where} by ${values.value}${now === undefined ? "." : `; it is now ${now}.`}`,
      );
    else console.log(`Set metric "${values.title}"${where}${now === undefined ? "." : ` to ${now}.`}`);
    return 0;
  },
};
