// Settings from a file of NAME=value lines, the format of install.sh's settings file (systemd's
// EnvironmentFile): `--env-file FILE` for any command, and, for commands that work on an installed
// server's data, that server's own file when it is there and no other database is named.
import { readFileSync, statSync } from "node:fs";
import { ConfigError, fileProblem } from "./config.ts";

/** install.sh's settings file, which its systemd unit gives the server. */
export const INSTALLED_ENV_FILE = "/etc/signalboard/signalboard.env";

/** The variables that name a database: with one of them given, the installed server's file is not read. */
const NAMES_A_DATABASE = ["DATA_DIR", "DATABASE_URL", "DATABASE_URL_FILE"];

export type Env = Record<string, string | undefined>;

/**
 * The environment a command runs with: the process's, over the file's (`--env-file`), or over the
 * installed server's file when `installed` and nothing names a database. Flags still win over both.
 */
export function environment(
  flags: { "env-file"?: string; "data-dir"?: string; "database-url"?: string },
  { installed = false, env = process.env as Env, installedFile = INSTALLED_ENV_FILE } = {},
): Env {
  const named =
    flags["data-dir"] !== undefined ||
    flags["database-url"] !== undefined ||
    NAMES_A_DATABASE.some((name) => env[name]);
  const file = flags["env-file"] ?? (installed && !named ? existing(installedFile) : undefined);
  if (file === undefined) return env;
  return { ...readEnvFile(file, flags["env-file"] === undefined), ...definedOnly(env) };
}

/** The file's NAME=value pairs. Blank lines and lines starting with # or ; are skipped; quotes around a value are removed. */
export function readEnvFile(path: string, installed = false): Record<string, string> {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (error) {
    const who = installed ? `The installed server's settings, ${path},` : `The settings file ${path} (--env-file)`;
    const hint = installed
      ? ": run the command as the server's user (sudo -u signalboard signalboard ...), or name the database yourself (--data-dir, --env-file, DATABASE_URL)"
      : "";
    throw new ConfigError(`${who} cannot be read: ${fileProblem(error)}${hint}.`);
  }
  const out: Record<string, string> = {};
  for (const [i, raw] of text.split(/\r?\n/).entries()) {
    const line = raw.trim();
    if (!line || line.startsWith("#") || line.startsWith(";")) continue;
    const m = /^(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.*)$/.exec(line);
    if (!m)
      throw new ConfigError(
        `${path}, line ${i + 1}, is not a NAME=value setting or a # comment: ${JSON.stringify(raw)}.`,
      );
    out[m[1]!] = unquote(m[2]!);
  }
  return out;
}

function unquote(value: string): string {
  const q = value[0];
  if ((q === '"' || q === "'") && value.length >= 2 && value.endsWith(q)) {
    const inner = value.slice(1, -1);
    return q === '"' ? inner.replace(/\\(["\\$`])/g, "$1") : inner;
  }
  return value;
}

function existing(path: string): string | undefined {
  try {
    statSync(path);
    return path;
  } catch (error) {
    // There but out of reach (its directory is the service's group's) is said by readEnvFile: the
    // command would otherwise work on some other database.
    return (error as NodeJS.ErrnoException).code === "ENOENT" ? undefined : path;
  }
}

function definedOnly(env: Env): Env {
  return Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ""));
}
