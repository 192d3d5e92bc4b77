// signalboard export / import: a project's events as NDJSON (one JSON event per line).
import { randomBytes } from "node:crypto";
import { closeSync, createWriteStream, fsyncSync, lstatSync, openSync, renameSync, rmSync, type Stats } from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
import { logBody } from "../api/models.ts";
import type { ImportLine, ImportProgress } from "../domain/ingest.ts";
import { validate } from "../domain/validation.ts";
import { ValidationError } from "../errors.ts";
import {
  checkDatabase,
  type Command,
  configFrom,
  managementOptions,
  parse,
  UsageError,
  withServices,
} from "./command.ts";

export const exportCommand: Command = {
  summary: "write a project's events as NDJSON (to a file or stdout)",
  usage:
    "signalboard export --project P [--channel C] [--out FILE [--force]]   (FILE appears only once complete; --force replaces an existing one)",
  async run(argv) {
    const { values } = parse(argv, {
      ...managementOptions,
      project: { type: "string" },
      channel: { type: "string" },
      out: { type: "string" },
      force: { type: "boolean" },
    });
    if (!values.project) throw new UsageError("--project is required");
    const config = configFrom(values, { installed: true });
    return withServices(config, values, async (services) => {
      const file = values.out ? outFile(values.out, values.force ?? false, services.refuseOwnFile) : null;
      const out = file ? createWriteStream("", { fd: file.fd }) : process.stdout;
      // A reader that goes away (`| head`) ends the export quietly; a failing disk is an error.
      let failed: NodeJS.ErrnoException | null = null;
      out.on("error", (error) => (failed = error));
      let count = 0;
      try {
        // Lines go out in chunks of about 64 KiB: one write per line cost a system call each.
        let chunk = "";
        const send = async () => {
          if (chunk && !out.write(chunk)) await drained(out);
          chunk = "";
        };
        for await (const line of services.transfer.exportEvents(values.project!, values.channel)) {
          if (failed) break;
          chunk += line + "\n";
          count++;
          if (chunk.length >= 65_536) await send();
        }
        if (!failed) await send();
        if (file) await new Promise<void>((resolve) => (out as ReturnType<typeof createWriteStream>).end(resolve));
        const error = failed as NodeJS.ErrnoException | null;
        if (error && error.code !== "EPIPE")
          throw new Error(
            `could not write the export: ${error.message}${file?.existed ? `; ${file.path} was left as it was` : ""}`,
          );
        file?.complete();
      } catch (error) {
        file?.abandon();
        throw error;
      }
      const error = failed as NodeJS.ErrnoException | null;
      if (!error) console.error(`Exported ${count} event${count === 1 ? "" : "s"} of "${values.project}".`);
      return 0;
    });
  },
};

/** Resolves when `out` can take more, or has failed (each wait removes its listeners). */
function drained(out: NodeJS.WritableStream): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      out.off("drain", done);
      out.off("error", done);
      resolve();
    };
    out.on("drain", done);
    out.on("error", done);
  });
}

/**
 * The export's file: written under a hidden temporary name beside `path` (readable by its owner
 * only), and renamed to `path` once complete, so a failed or interrupted export never leaves a part
 * under that name nor touches a file already there. The database's own files are refused.
 */
function outFile(path: string, force: boolean, refuseOwnFile: (target: string) => void) {
  const target = resolve(path);
  refuseOwnFile(target);
  const existing = lstatOrNull(target);
  // What --force replaces is a file: a device (/dev/null), a pipe, a symlink or a directory is
  // refused (renaming over it would replace it, not write to it); write to stdout instead.
  if (existing && !existing.isFile())
    throw new UsageError(
      `${target} is not a regular file; leave out --out to write to stdout (and redirect it: > FILE, | gzip)`,
    );
  const existed = existing !== null;
  if (existed && !force) throw new UsageError(`${target} already exists; choose another name or add --force`);
  const partial = join(dirname(target), `.${basename(target)}.partial-${randomBytes(6).toString("hex")}`);
  let fd: number;
  try {
    fd = openSync(partial, "wx", 0o600);
  } catch (error) {
    throw new UsageError(
      `cannot write ${target}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`,
    );
  }
  return {
    fd,
    path: target,
    existed,
    complete: () => {
      const done = openSync(partial, "r");
      try {
        fsyncSync(done); // on disk before it takes the name: a power cut never leaves an empty file there
      } finally {
        closeSync(done);
      }
      renameSync(partial, target);
    },
    abandon: () => rmSync(partial, { force: true }),
  };
}

/** Every line is checked before anything is stored: a bad file imports nothing. */
function parseLines(text: string, project?: string): { events: ImportLine[]; problems: string[] } {
  const events: ImportLine[] = [];
  const problems: string[] = [];
  text.split("\n").forEach((line, i) => {
    if (!line.trim()) return;
    try {
      const raw = JSON.parse(line) as Record<string, unknown>;
      const input = validate(logBody, project ? { ...raw, project } : raw);
      if (input.timestamp === undefined)
        throw new ValidationError([
          { path: "timestamp", type: "invalid_type", message: "timestamp: is required in an import (Unix seconds)" },
        ]);
      events.push({ ...input, timestamp: input.timestamp });
    } catch (error) {
      problems.push(
        `line ${i + 1}: ${error instanceof ValidationError ? error.issues.map((x) => x.message).join("; ") : `not JSON (${(error as Error).message})`}`,
      );
    }
  });
  return { events, problems };
}

export const importCommand: Command = {
  summary: "read NDJSON events back (stored as historical: never notified; safe to run again)",
  usage:
    "signalboard import FILE|- [--project P]   (P overrides each line's project; events already present are skipped)",
  async run(argv) {
    const { values, positionals } = parse(argv, { ...managementOptions, project: { type: "string" } });
    const source = positionals[0];
    if (!source) throw new UsageError("give a file to import, or - for stdin");
    const config = configFrom(values, { installed: true });
    checkDatabase(config, values); // before the file is read and the import announced
    const text = source === "-" ? await Bun.stdin.text() : await Bun.file(source).text();
    const { events, problems } = parseLines(text, values.project);
    if (problems.length) {
      console.error(`Nothing imported: ${problems.length} line${problems.length === 1 ? "" : "s"} cannot be read.`);
      for (const p of problems.slice(0, 20)) console.error(`  ${p}`);
      if (problems.length > 20) console.error(`  ... and ${problems.length - 20} more`);
      return 1;
    }
    // Said before the first commit, because a kill or a power cut leaves no chance to say it after.
    console.error(
      `Importing ${plural(events.length, "event")}; if this is interrupted, run the same command again: events already present are skipped.`,
    );
    return withServices(config, values, async ({ ingest }) => {
      let progress: ImportProgress = { imported: 0, skipped: 0 };
      try {
        const { imported, skipped, createdProjects } = await ingest.importEvents(events, (p) => (progress = p));
        for (const p of createdProjects) console.log(`Created project "${p}".`);
        console.log(
          `Imported ${plural(imported, "event")} as historical events (no notifications); skipped ${skipped} already present.`,
        );
        return 0;
      } catch (error) {
        if (progress.imported)
          console.error(
            `Stored ${plural(progress.imported, "event")} before this failure; run the same command again to import the rest.`,
          );
        throw error;
      }
    });
  },
};

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? "" : "s"}`;

function lstatOrNull(path: string): Stats | null {
  try {
    return lstatSync(path);
  } catch {
    return null;
  }
}
