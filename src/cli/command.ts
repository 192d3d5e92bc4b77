// What every subcommand shares: argument parsing (every setting is accepted as a flag everywhere),
// the services for management commands, and the exit codes (0 ok, 1 failed, 2 usage).
import { parseArgs, type ParseArgsConfig } from "node:util";
import { type Config, configFlagOptions, ConfigError, loadConfig } from "../config.ts";
import { environment, INSTALLED_ENV_FILE } from "../env-file.ts";
import { AppError } from "../errors.ts";
import { createServices, databasePath, type Services } from "../services.ts";
import { existsSync } from "node:fs";
import { didYouMean } from "./suggest.ts";
import { parseSeconds } from "../domain/units.ts";

export type Options = NonNullable<ParseArgsConfig["options"]>;

export type Command = {
  summary: string;
  usage: string;
  run: (argv: string[]) => Promise<number>;
};

export class UsageError extends Error {}

export function parse<O extends Options>(argv: string[], options: O) {
  try {
    return parseArgs({
      args: argv,
      options: { ...configFlagOptions(), help: { type: "boolean", short: "h" }, ...options },
      allowPositionals: true,
      strict: true,
    });
  } catch (error) {
    const known = [...Object.keys(configFlagOptions()), "help", ...Object.keys(options)].map((name) => `--${name}`);
    throw new UsageError(parseProblem(error as Error & { code?: string }, known));
  }
}

/** node:util's message, said plainly, with the nearest known option for an unknown one. */
function parseProblem(error: Error & { code?: string }, known: string[]): string {
  const option = /'(-[^' ]+)/.exec(error.message)?.[1];
  if (!option) return error.message;
  if (error.code === "ERR_PARSE_ARGS_UNKNOWN_OPTION")
    return `unknown option ${option}${didYouMean(option.split("=")[0]!, known)}`;
  if (/argument missing/.test(error.message)) return `${option} needs a value`;
  if (/does not take an argument/.test(error.message)) return `${option} takes no value`;
  return error.message;
}

/** The options of every command that works on the database. */
export const managementOptions = {
  init: { type: "boolean" },
} as const;

/**
 * The configuration from the flags, the environment and `--env-file`. `installed`: for commands
 * that work on the data, an installed server's settings file is read when nothing names a database.
 */
export function configFrom(values: Record<string, unknown>, { installed = false } = {}): Config {
  return loadConfig(values, environment(values, { installed }));
}

/**
 * Runs `fn` with the services the server has, on its database; safe while the server runs. A data
 * directory without a database is refused unless `init`: a command run without the server's
 * settings would otherwise work on a new, empty database of its own, and seem to succeed.
 */
export async function withServices<T>(
  config: Config,
  options: { init?: boolean },
  fn: (services: Services) => Promise<T> | T,
): Promise<T> {
  const fresh = checkDatabase(config, options);
  const services = await createServices(config);
  if (fresh) console.error(`Made a new, empty database in ${config.dataDir} (--init).`);
  try {
    return await fn(services);
  } finally {
    await services.close();
  }
}

/** Throws unless the configuration names a database that exists, or `init` asks for a new one; whether it is new. */
export function checkDatabase(config: Config, { init = false }: { init?: boolean }): boolean {
  const fresh = !config.databaseUrl && !existsSync(databasePath(config.dataDir));
  if (fresh && !init) throw new ConfigError(noDatabase(config.dataDir));
  return fresh;
}

function noDatabase(dataDir: string): string {
  return [
    `there is no database in ${dataDir}, so this command would work on a new, empty one instead of a server's. Either:`,
    `  - give it the server's settings: --env-file FILE (install.sh's is ${INSTALLED_ENV_FILE}, read by itself when it is there and readable), --data-dir DIR, or DATABASE_URL for PostgreSQL;`,
    "  - or, to start a new database here, add --init (the server makes its own when it first starts).",
  ].join("\n");
}

/** Turns a thrown error into a message on stderr and an exit code. */
export function report(error: unknown, usage?: string): number {
  if (error instanceof UsageError) {
    console.error(`error: ${error.message}${usage ? `\n\nusage: ${usage}` : ""}`);
    return 2;
  }
  if (error instanceof ConfigError) {
    console.error(`error: ${error.message}`);
    return 2;
  }
  if (error instanceof AppError) {
    console.error(`error: ${error.message}`);
    return error.kind === "invalid" ? 2 : 1;
  }
  console.error(`error: ${(error as Error)?.message ?? String(error)}`);
  return 1;
}

export function table(rows: string[][]): string {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? "").length)));
  return rows
    .map((r) =>
      r
        .map((cell, i) => cell.padEnd(widths[i]!))
        .join("  ")
        .trimEnd(),
    )
    .join("\n");
}

/** A duration flag as the API takes it (seconds): a number of seconds, or with a unit (90s, 15m, 12h, 1d). */
export function durationFlag(flag: string, text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  try {
    return parseSeconds(text);
  } catch {
    throw new UsageError(`--${flag} takes seconds or a duration such as 90s, 15m, 12h or 1d; got "${text}"`);
  }
}

/** Options that each take a string: `...stringFlags("project", "name")`. */
export function stringFlags<const N extends string>(...names: N[]): { [K in N]: { type: "string" } } {
  return Object.fromEntries(names.map((name) => [name, { type: "string" }])) as { [K in N]: { type: "string" } };
}

export function numberFlag(flag: string, text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  if (!Number.isFinite(Number(text)) || text.trim() === "")
    throw new UsageError(`--${flag} takes a number; got "${text}"`);
  return Number(text);
}

export function when(ms: number | null | undefined): string {
  return ms ? new Date(ms).toISOString().replace("T", " ").slice(0, 19) : "-";
}
