import { projectService } from "../domain/projects.ts";
import { type Command, configFrom, parse, table, UsageError, when, withStore } from "./command.ts";

export const project: Command = {
  summary: "create, list or delete projects",
  usage: "signalboard project create NAME | project list | project delete NAME --yes",
  async run(argv) {
    const { values, positionals } = parse(argv, { yes: { type: "boolean" } });
    const [action, name] = positionals;
    const config = configFrom(values);
    return withStore(config, async (store) => {
      const projects = projectService(store);
      if (action === "create" && name) {
        const created = await projects.create(name);
        console.log(`Created project "${created.name}".`);
        return 0;
      }
      if (action === "list") {
        const rows = projects.list().map((p) => [p.name, String(projects.channels(p.name).length), String(projects.eventCount(p.name)), when(p.createdAt)]);
        console.log(table([["NAME", "CHANNELS", "EVENTS", "CREATED"], ...rows]));
        return 0;
      }
      if (action === "delete" && name) {
        const events = projects.eventCount(name);
        if (!values.yes) throw new UsageError(`deleting project "${name}" also deletes its ${events} events; add --yes to confirm`);
        await projects.deleteProject(name);
        console.log(`Deleted project "${name}" and its ${events} events.`);
        return 0;
      }
      throw new UsageError("expected create NAME, list or delete NAME");
    });
  },
};
