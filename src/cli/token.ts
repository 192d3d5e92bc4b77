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

export const token: Command = {
  summary: "create, list or revoke API tokens",
  usage:
    "signalboard token create --name NAME [--projects A,B | --public --project P [--channel C] [--may-notify]] | token list | token revoke ID|PREFIX|NAME | token notify ID|PREFIX|NAME on|off",
  async run(argv) {
    const { values, positionals } = parse(argv, {
      ...managementOptions,
      name: { type: "string" },
      public: { type: "boolean" },
      project: { type: "string" },
      projects: { type: "string" },
      channel: { type: "string" },
      "may-notify": { type: "boolean" },
    });
    const [action, ref] = positionals;
    const config = configFrom(values, { installed: true });
    return withServices(config, values, async ({ tokens }) => {
      if (action === "create") {
        if (!values.name) throw new UsageError("--name is required");
        if (values["may-notify"] && !values.public)
          throw new UsageError("--may-notify is for public tokens (full-access tokens may always notify)");
        if (values.projects !== undefined && values.public)
          throw new UsageError("--projects is for full-access tokens; a public token has one --project");
        const projects = values.projects
          ?.split(",")
          .map((p) => p.trim())
          .filter(Boolean);
        const created = await tokens.create({
          name: values.name,
          kind: values.public ? "public" : "full",
          project: values.project,
          channel: values.channel,
          mayNotify: values["may-notify"] ?? false,
          projects,
        });
        const scope =
          created.info.kind === "full"
            ? `full access${created.info.projects ? ` to ${created.info.projects.join(", ")}` : ""}`
            : `public, limited to ${created.info.project}${created.info.channel ? `/${created.info.channel}` : ""}, ${created.info.mayNotify ? "may" : "may not"} notify`;
        console.log(
          `Created token "${created.info.name}" (${scope}), id ${created.info.id}, prefix ${created.info.prefix}.`,
        );
        console.log("Copy it now: it is shown only this once.");
        console.log(created.token);
        return 0;
      }
      if (action === "list") {
        const rows = (await tokens.list()).map((t) => [
          String(t.id),
          t.name,
          t.kind,
          t.kind === "full"
            ? t.projects
              ? t.projects.join(",") || "none"
              : "all projects"
            : `${t.project}${t.channel ? `/${t.channel}` : ""}`,
          t.kind === "full" || t.mayNotify ? "yes" : "no",
          t.prefix,
          when(t.createdAt),
          t.createdBy ?? "command line",
          when(t.lastUsedAt),
        ]);
        console.log(
          table([
            ["ID", "NAME", "ACCESS", "SCOPE", "NOTIFIES", "PREFIX", "CREATED", "CREATED BY", "LAST USED"],
            ...rows,
          ]),
        );
        return 0;
      }
      if (action === "revoke" && ref) {
        const revoked = await tokens.revoke(ref);
        console.log(`Revoked token "${revoked.name}" (${revoked.prefix}); it stops working now.`);
        return 0;
      }
      if (action === "notify" && ref && (positionals[2] === "on" || positionals[2] === "off")) {
        const changed = await tokens.setMayNotify(ref, positionals[2] === "on");
        console.log(
          `Public token "${changed.name}" (${changed.prefix}) ${changed.mayNotify ? "may now send notifications" : "may no longer send notifications"}.`,
        );
        return 0;
      }
      throw new UsageError("expected create, list, revoke, or notify ID on|off");
    });
  },
};
