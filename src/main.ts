#!/usr/bin/env bun
// The entry point, from source (`bun src/main.ts ...`) and compiled (`signalboard ...`): pick the
// subcommand (serve by default), run it, exit with its code.
import { VERSION } from "./services.ts";
import { backup } from "./cli/backup.ts";
import { channel } from "./cli/channel.ts";
import { copy } from "./cli/copy.ts";
import { device } from "./cli/device.ts";
import { healthcheck } from "./cli/healthcheck.ts";
import { hook } from "./cli/hook.ts";
import { integration } from "./cli/integration.ts";
import { type Command, report, UsageError } from "./cli/command.ts";
import { logCommand } from "./cli/log.ts";
import { metric } from "./cli/metric.ts";
import { project } from "./cli/project.ts";
import { serve } from "./cli/serve.ts";
import { tail } from "./cli/tail.ts";
import { token } from "./cli/token.ts";
import { alert } from "./cli/alert.ts";
import { check } from "./cli/check.ts";
import { maintenance } from "./cli/maintenance.ts";
import { exportCommand, importCommand } from "./cli/transfer.ts";
import { nearest } from "./cli/suggest.ts";
import { user } from "./cli/user.ts";
import { describeSettings, flagOf, settings } from "./config.ts";
import { logAsCommand } from "./logger.ts";
import { serveReads } from "./store/sqlite/reader-process.ts";
import { READER_ARG } from "./workers.ts";

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
  integration,
  hook,
  log: logCommand,
  metric,
  alert,
  maintenance,
  check,
  tail,
  backup,
  export: exportCommand,
  import: importCommand,
  copy,
  healthcheck,
};

const USAGE = "signalboard [settings] [command] [options]";

function help(): string {
  const list = Object.entries(commands).map(([name, c]) => `  ${name.padEnd(12)} ${c.summary}`);
  return [
    `signalboard ${VERSION}: a self-hosted event and metric tracker`,
    "",
    `usage: ${USAGE}`,
    "",
    "commands:",
    ...list,
    `  ${"version".padEnd(12)} print the version`,
    "",
    "settings (each flag also works as an environment variable; flags win; they may come before or after the command):",
    describeSettings(),
    "",
    "Any setting's variable may instead name a file that holds the value: NAME_FILE=/path.",
    "Run `signalboard COMMAND --help` for a command's options.",
  ].join("\n");
}

const settingFlags = [...Object.keys(settings).map(flagOf), "--env-file"];
const ASKS = ["--help", "-h", "--version", "-v"];

/**
 * `[settings] [command] [options]`: settings apply to every command, so they may come first
 * (`signalboard --data-dir D token list`); a command's own options may not, as the command is not
 * known yet to say what they mean.
 */
function split(argv: string[]): { leading: string[]; name: string | undefined; rest: string[] } {
  const leading: string[] = [];
  let i = 0;
  for (; i < argv.length && argv[i]!.startsWith("-") && !ASKS.includes(argv[i]!); i++) {
    const arg = argv[i]!;
    const flag = arg.split("=", 1)[0]!;
    if (!settingFlags.includes(flag)) {
      const near = nearest(flag, settingFlags);
      if (near) throw new UsageError(`${flag} is not a setting; did you mean ${near}?`);
      throw new UsageError(
        `${flag} is not a setting, so it cannot come before the command. Before it may come only settings (${settingFlags.join(", ")}); a command's own options go after it, as in: signalboard --data-dir DIR token create --name NAME`,
      );
    }
    if (arg.includes("=")) {
      leading.push(arg);
      continue;
    }
    if (argv[i + 1] === undefined) throw new UsageError(`${flag} needs a value`);
    leading.push(arg, argv[++i]!);
  }
  const word = argv[i];
  const named = word !== undefined && !word.startsWith("-");
  return { leading, name: named ? word : undefined, rest: argv.slice(named ? i + 1 : i) };
}

async function main(argv: string[]): Promise<number> {
  // The server's reader processes are this program too (store/sqlite/readers.ts).
  if (argv[0] === READER_ARG) return serveReads(argv[1]!).then(() => 0);
  let line: ReturnType<typeof split>;
  try {
    line = split(argv);
  } catch (error) {
    return report(error, USAGE);
  }
  const { leading, name, rest } = line;
  const asked = name === undefined ? rest[0] : undefined;
  if (name === "help" || asked === "--help" || asked === "-h") return print(help());
  if (name === "version" || asked === "--version" || asked === "-v") return print(VERSION);
  const command = name === undefined ? serve : commands[name];
  if (!command) {
    const near = nearest(name!, [...Object.keys(commands), "version", "help"]);
    console.error(
      near
        ? `error: unknown command "${name}"; did you mean ${near}? (signalboard --help lists them)`
        : `error: unknown command "${name}"\n\n${help()}`,
    );
    return 2;
  }
  if (rest.includes("--help") || rest.includes("-h")) return print(`usage: ${command.usage}\n\n${command.summary}`);
  // JSON log lines are the server's; any other command says what it did itself, and warns in words.
  if (command !== serve) logAsCommand();
  try {
    // Settings first: the same setting given again after the command wins.
    return await command.run([...leading, ...rest]);
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
