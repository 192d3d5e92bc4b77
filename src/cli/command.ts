// What every subcommand shares: argument parsing (every setting is accepted as a flag everywhere),
// the services for management commands, and the exit codes (0 ok, 1 failed, 2 usage).
import { parseArgs, type ParseArgsConfig } from "node:util";
import { type Config, configFlagOptions, ConfigError, loadConfig } from "../config.ts";
import { AppError } from "../errors.ts";
import { createServices, databasePath, type Services } from "../services.ts";
import { existsSync } from "node:fs";

export type Options = NonNullable<ParseArgsConfig["options"]>;

export type Command = {
  summary: string;
  usage: string;
  run: (argv: string[]) => Promise<number>;
};

export class UsageError extends Error {}

export function parse<O extends Options>(argv: string[], options: O) {
  try {
    return parseArgs({ args: argv, options: { ...configFlagOptions(), help: { type: "boolean", short: "h" }, ...options }, allowPositionals: true, strict: true });
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
}

export function configFrom(values: Record<string, unknown>): Config {
  return loadConfig(values);
}

/** Runs `fn` with the services the server has, on its database; safe while the server runs. */
export async function withServices<T>(config: Config, fn: (services: Services) => Promise<T> | T): Promise<T> {
  // A command that finds no database makes one: said, since on an install that uses PostgreSQL
  // a command run without DATABASE_URL would otherwise work on a new, empty SQLite database.
  const fresh = !config.databaseUrl && !existsSync(databasePath(config.dataDir));
  const services = await createServices(config);
  if (fresh) console.error(`note: no database was in ${config.dataDir}; a new one was made there (to use PostgreSQL, set DATABASE_URL).`);
  try {
    return await fn(services);
  } finally {
    await services.close();
  }
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
  return rows.map((r) => r.map((cell, i) => cell.padEnd(widths[i]!)).join("  ").trimEnd()).join("\n");
}

export function when(ms: number | null | undefined): string {
  return ms ? new Date(ms).toISOString().replace("T", " ").slice(0, 19) : "-";
}
