import { clientFrom, clientOptions, parseTags, postJson } from "./client.ts";
import { type Command, parse, UsageError } from "./command.ts";

export const logCommand: Command = {
  summary: "send an event to a running server",
  usage:
    "signalboard log --project P --channel C --event E [--description D] [--icon 🚀] [--notify] [--tag key=value ...] [--user-id U] [--markdown] [--timestamp SECONDS] [--url URL] [--token TOKEN]",
  async run(argv) {
    const { values } = parse(argv, {
      ...clientOptions,
      project: { type: "string" },
      channel: { type: "string" },
      event: { type: "string" },
      description: { type: "string" },
      icon: { type: "string" },
      notify: { type: "boolean" },
      tag: { type: "string", multiple: true },
      "user-id": { type: "string" },
      markdown: { type: "boolean" },
      timestamp: { type: "string" },
    });
    if (!values.project || !values.channel || !values.event)
      throw new UsageError("--project, --channel and --event are required");
    const client = clientFrom(values);
    const result = await postJson(client, "/v1/log", {
      project: values.project,
      channel: values.channel,
      event: values.event,
      description: values.description,
      icon: values.icon,
      notify: values.notify ?? false,
      tags: parseTags(values.tag),
      user_id: values["user-id"],
      parser: values.markdown ? "markdown" : undefined,
      timestamp: values.timestamp === undefined ? undefined : seconds(values.timestamp),
    });
    console.log(`Logged event ${result.id} to ${values.project}/${values.channel}.`);
    return 0;
  },
};

function seconds(text: string): number {
  if (!/^\d+(\.\d+)?$/.test(text))
    throw new UsageError(`--timestamp takes Unix seconds, such as 1767225600; got "${text}"`);
  return Number(text);
}
