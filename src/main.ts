#!/usr/bin/env bun
// The entry point, from source (`bun src/main.ts ...`) and compiled (`signalboard ...`): pick the
// subcommand (serve by default), run it, exit with its code.
import { VERSION } from "./app.ts";
import { backup } from "./cli/backup.ts";
import { channel } from "./cli/channel.ts";
import { device } from "./cli/device.ts";
import { type Command, report } from "./cli/command.ts";
import { logCommand } from "./cli/log.ts";
import { metric } from "./cli/metric.ts";
import { project } from "./cli/project.ts";
import { serve } from "./cli/serve.ts";
import { tail } from "./cli/tail.ts";
import { token } from "./cli/token.ts";
import { exportCommand, importCommand } from "./cli/transfer.ts";
import { user } from "./cli/user.ts";
import { describeSettings } from "./config.ts";

// The database holds the push keys, token hashes and sessions: what Signalboard creates (the data
// directory, databases, backups, exports) is readable by its own user only, whatever the shell's umask.
process.umask(0o077);

const commands: Record<string, Command> = {
  serve,
  project,
  channel,
  token,
  user,
  device,
  log: logCommand,
  metric,
  tail,
  backup,
  export: exportCommand,
  import: importCommand,
};

function help(): string {
  const list = Object.entries(commands).map(([name, c]) => `  ${name.padEnd(10)} ${c.summary}`);
  return [
    `signalboard ${VERSION}: a self-hosted event and metric tracker`,
    "",
    "usage: signalboard [command] [options]",
    "",
    "commands:",
    ...list,
    `  ${"version".padEnd(10)} print the version`,
    "",
    "settings (each flag also works as an environment variable; flags win):",
    describeSettings(),
    "",
    "Any setting's variable may instead name a file that holds the value: NAME_FILE=/path.",
    "Run `signalboard COMMAND --help` for a command's options.",
  ].join("\n");
}

async function main(argv: string[]): Promise<number> {
  const [first, ...rest] = argv;
  if (first === "--help" || first === "-h" || first === "help") return print(help());
  if (first === "version" || first === "--version" || first === "-v") return print(VERSION);
  const named = first !== undefined && !first.startsWith("-");
  const command = named ? commands[first] : serve;
  if (!command) {
    console.error(`error: unknown command "${first}"\n\n${help()}`);
    return 2;
  }
  const args = named ? rest : argv;
  if (args.includes("--help") || args.includes("-h")) return print(`usage: ${command.usage}\n\n${command.summary}`);
  try {
    return await command.run(args);
  } catch (error) {
    return report(error, command.usage);
  }
}

function print(text: string): number {
  console.log(text);
  return 0;
}

void main(process.argv.slice(2)).then((code) => {
  process.exitCode = code;
});
