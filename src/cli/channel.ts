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

export const channel: Command = {
  summary: "create, list or delete channels of a project",
  usage: "signalboard channel create PROJECT NAME | channel list PROJECT | channel delete PROJECT NAME --yes",
  async run(argv) {
    const { values, positionals } = parse(argv, { ...managementOptions, yes: { type: "boolean" } });
    const [action, projectName, name] = positionals;
    const config = configFrom(values, { installed: true });
    return withServices(config, values, async ({ projects }) => {
      if (action === "create" && projectName && name) {
        await projects.createChannel(projectName, name);
        console.log(`Created channel "${name}" in project "${projectName}".`);
        return 0;
      }
      if (action === "list" && projectName) {
        const rows = await Promise.all(
          (await projects.channels(projectName)).map(async (c) => [
            c.name,
            String(await projects.eventCount(projectName, c.name)),
            when(c.createdAt),
          ]),
        );
        console.log(table([["NAME", "EVENTS", "CREATED"], ...rows]));
        return 0;
      }
      if (action === "delete" && projectName && name) {
        const events = await projects.eventCount(projectName, name);
        if (!values.yes)
          throw new UsageError(`deleting channel "${name}" also deletes its ${events} events; add --yes to confirm`);
        await projects.deleteChannel(projectName, name);
        console.log(`Deleted channel "${name}" and its ${events} events.`);
        return 0;
      }
      throw new UsageError("expected create PROJECT NAME, list PROJECT or delete PROJECT NAME");
    });
  },
};
