// Structured logs: one JSON object per line on stderr, so stdout stays for what commands print.
// Secrets never reach here: callers log ids and prefixes, never tokens, passwords or webhook URLs.
// The JSON lines are the server's; a command prints its own messages and, from the code it shares
// with the server, only warnings and errors, as sentences (logAsCommand).
type Level = "debug" | "info" | "warn" | "error" | "silent";
const ORDER: Record<Level, number> = { debug: 10, info: 20, warn: 30, error: 40, silent: 99 };

let threshold = ORDER.info;
let sentences = false;

export function setLogLevel(level: Level): void {
  threshold = ORDER[level];
}

/** For a command (anything but the server): warnings and errors only, each a line of words ("warning: ..."). */
export function logAsCommand(): void {
  threshold = ORDER.warn;
  sentences = true;
}

export function logEnabled(level: Exclude<Level, "silent">): boolean {
  return ORDER[level] >= threshold;
}

function write(level: Exclude<Level, "silent">, msg: string, fields: Record<string, unknown> = {}): void {
  if (ORDER[level] < threshold) return;
  if (sentences) {
    process.stderr.write(`${level === "error" ? "error" : "warning"}: ${msg}${because(fields.error)}\n`);
    return;
  }
  const entry: Record<string, unknown> = { time: new Date().toISOString(), level, msg };
  for (const [key, value] of Object.entries(fields))
    entry[key] = value instanceof Error ? { name: value.name, message: value.message, stack: value.stack } : value;
  process.stderr.write(JSON.stringify(entry) + "\n");
}

/** What went wrong, after a sentence: " (the error's message)". */
function because(error: unknown): string {
  if (error === undefined || error === null) return "";
  return ` (${error instanceof Error ? error.message : String(error)})`;
}

export const log = {
  debug: (msg: string, fields?: Record<string, unknown>) => write("debug", msg, fields),
  info: (msg: string, fields?: Record<string, unknown>) => write("info", msg, fields),
  warn: (msg: string, fields?: Record<string, unknown>) => write("warn", msg, fields),
  error: (msg: string, fields?: Record<string, unknown>) => write("error", msg, fields),
};
