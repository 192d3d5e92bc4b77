// signalboard copy --to URL|DIR: the whole instance into another database (SQLite → PostgreSQL,
// PostgreSQL → SQLite, or the same kind), read from the source as one moment while its server runs.
import { existsSync, statSync } from "node:fs";
import { resolve } from "node:path";
import { ConfigError, safeUrl } from "../config.ts";
import { type CopyProgress, type CopyResult, copyData, databasePath } from "../services.ts";
import { type Command, configFrom, parse, table, UsageError } from "./command.ts";

export const copy: Command = {
  summary: "copy everything (accounts, tokens, events, settings) into PostgreSQL or an SQLite data directory",
  usage:
    "signalboard copy --to postgres://USER:PASSWORD@HOST:PORT/DB|DIR [--force]   (run with the source's settings; a target that holds data is replaced only with --force)",
  async run(argv) {
    const { values, positionals } = parse(argv, { to: { type: "string" }, force: { type: "boolean" } });
    if (positionals.length) throw new UsageError(`unexpected ${positionals[0]}: the target goes after --to`);
    if (!values.to) throw new UsageError("--to is required: a postgres:// URL, or a data directory for SQLite");
    const to = targetOf(values.to);
    const config = configFrom(values, { installed: true });
    // A source that does not exist would be copied as an empty one.
    if (!config.databaseUrl && !existsSync(databasePath(config.dataDir)))
      throw new ConfigError(
        `there is no database in ${config.dataDir} to copy: run the copy with the server's settings (--env-file FILE, --data-dir DIR, or DATABASE_URL)`,
      );
    const from = config.databaseUrl
      ? `PostgreSQL at ${safeUrl(config.databaseUrl)}`
      : `SQLite in ${resolve(config.dataDir)}`;
    const into = "databaseUrl" in to ? `PostgreSQL at ${safeUrl(to.databaseUrl)}` : `SQLite in ${to.dataDir}`;
    console.error(`Copying ${from} to ${into}, as one moment of the source (its server may run on meanwhile).`);
    const result = await copyData(config, to, { force: values.force ?? false, onProgress: progress() });
    console.log(counts(result));
    const differ = result.counts.filter((c) => c.source !== c.target);
    if (differ.length) {
      const which = differ.map((c) => `${c.table}: ${c.source} in the source, ${c.target} copied`).join("; ");
      console.error(`error: the copy does not match the source (${which}); the target was left as it was.`);
      return 1;
    }
    console.log(
      `Copied ${number(result.rows)} rows in ${seconds(result.elapsedMs)}; every table's count matches the source's.`,
    );
    console.log(
      "databaseUrl" in to
        ? "Start the instances with DATABASE_URL set to that database (docs/scale-out.md)."
        : `Start the server with --data-dir ${to.dataDir} (DATA_DIR).`,
    );
    return 0;
  },
};

function targetOf(to: string): { databaseUrl: string } | { dataDir: string } {
  if (/^postgres(ql)?:\/\//.test(to)) return { databaseUrl: to };
  if (/^\w+:\/\//.test(to))
    throw new UsageError(`--to ${safeUrl(to)}: a copy goes to a postgres:// URL or to a data directory for SQLite`);
  const dataDir = resolve(to);
  if (existsSync(dataDir) && !statSync(dataDir).isDirectory())
    throw new UsageError(`--to ${dataDir} is a file: give a data directory, where the copy makes signalboard.db`);
  return { dataDir };
}

const number = (n: number) => n.toLocaleString("en-US");
const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

/** Each table's rows in the source and in the copy. */
function counts(result: CopyResult): string {
  return table([
    ["TABLE", "SOURCE", "COPIED", ""],
    ...result.counts.map((c) => [c.table, number(c.source), number(c.target), c.source === c.target ? "" : "differs"]),
  ]);
}

/** Each table's line: its rows, and how fast they went when there were enough to say. */
function line(p: Extract<CopyProgress, { kind: "rows" }>, soFar: boolean): string {
  const rate = p.rows >= 1000 && p.elapsedMs > 0 ? `  ${number(Math.round(p.rows / (p.elapsedMs / 1000)))} rows/s` : "";
  return `  ${p.table.padEnd(20)} ${number(p.rows).padStart(12)} rows${soFar ? " so far" : ""}${rate}`;
}

/**
 * Progress on stderr. On a terminal, a table's line grows in place; elsewhere (a log, a pipe) each
 * table gets its line once done, and a table still going one every 10 seconds, so nothing in the
 * output is a control character.
 */
function progress(stream = process.stderr): (p: CopyProgress) => void {
  const tty = stream.isTTY === true;
  let shownAt = 0;
  return (p) => {
    if (p.kind === "step") {
      stream.write(`${tty ? "\r\x1b[K" : ""}${p.what[0]!.toUpperCase()}${p.what.slice(1)}...\n`);
      return;
    }
    if (p.done) {
      stream.write(`${tty ? "\r\x1b[K" : ""}${line(p, false)}\n`);
      shownAt = 0;
      return;
    }
    if (tty && performance.now() - shownAt >= 100) {
      stream.write(`\r\x1b[K${line(p, true)}`);
      shownAt = performance.now();
    } else if (!tty && p.elapsedMs - shownAt >= 10_000) {
      stream.write(`${line(p, true)}\n`);
      shownAt = p.elapsedMs;
    }
  };
}
