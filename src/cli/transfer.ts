// signalboard export / import: a project's events as NDJSON (one JSON event per line).
import { createWriteStream, openSync } from "node:fs";
import { logBody } from "../api/models.ts";
import type { ImportLine, ImportProgress } from "../domain/ingest.ts";
import { validate } from "../domain/validation.ts";
import { ValidationError } from "../errors.ts";
import { type Command, configFrom, parse, UsageError, withServices } from "./command.ts";

export const exportCommand: Command = {
  summary: "write a project's events as NDJSON (to a file or stdout)",
  usage: "signalboard export --project P [--channel C] [--out FILE]",
  async run(argv) {
    const { values } = parse(argv, { project: { type: "string" }, channel: { type: "string" }, out: { type: "string" } });
    if (!values.project) throw new UsageError("--project is required");
    const config = configFrom(values);
    return withServices(config, async ({ transfer }) => {
      const out = values.out ? createWriteStream("", { fd: openOut(values.out) }) : process.stdout;
      // A reader that goes away (`| head`) ends the export quietly; a failing disk is an error.
      let failed: NodeJS.ErrnoException | null = null;
      out.on("error", (error) => (failed = error));
      let count = 0;
      for await (const line of transfer.exportEvents(values.project!, values.channel)) {
        if (failed) break;
        if (!out.write(line + "\n")) await new Promise((resolve) => (out.once("drain", resolve), out.once("error", resolve)));
        count++;
      }
      if (values.out) await new Promise<void>((resolve) => (out as ReturnType<typeof createWriteStream>).end(resolve));
      const error = failed as NodeJS.ErrnoException | null;
      if (error && error.code !== "EPIPE") throw new Error(`could not write the export: ${error.message}`);
      if (!error) console.error(`Exported ${count} event${count === 1 ? "" : "s"} of "${values.project}".`);
      return 0;
    });
  },
};

/** Every line is checked before anything is stored: a bad file imports nothing. */
function parseLines(text: string, project?: string): { events: ImportLine[]; problems: string[] } {
  const events: ImportLine[] = [];
  const problems: string[] = [];
  text.split("\n").forEach((line, i) => {
    if (!line.trim()) return;
    try {
      const raw = JSON.parse(line) as Record<string, unknown>;
      const input = validate(logBody, project ? { ...raw, project } : raw);
      if (input.timestamp === undefined) throw new ValidationError([{ path: "timestamp", type: "invalid_type", message: "timestamp: is required in an import (Unix seconds)" }]);
      events.push({ ...input, timestamp: input.timestamp });
    } catch (error) {
      problems.push(`line ${i + 1}: ${error instanceof ValidationError ? error.issues.map((x) => x.message).join("; ") : `not JSON (${(error as Error).message})`}`);
    }
  });
  return { events, problems };
}

export const importCommand: Command = {
  summary: "read NDJSON events back (stored as historical: never notified; safe to run again)",
  usage: "signalboard import FILE|- [--project P]   (P overrides each line's project; events already present are skipped)",
  async run(argv) {
    const { values, positionals } = parse(argv, { project: { type: "string" } });
    const source = positionals[0];
    if (!source) throw new UsageError("give a file to import, or - for stdin");
    const config = configFrom(values);
    const text = source === "-" ? await Bun.stdin.text() : await Bun.file(source).text();
    const { events, problems } = parseLines(text, values.project);
    if (problems.length) {
      console.error(`Nothing imported: ${problems.length} line${problems.length === 1 ? "" : "s"} cannot be read.`);
      for (const p of problems.slice(0, 20)) console.error(`  ${p}`);
      if (problems.length > 20) console.error(`  ... and ${problems.length - 20} more`);
      return 1;
    }
    // Said before the first commit, because a kill or a power cut leaves no chance to say it after.
    console.error(`Importing ${plural(events.length, "event")}; if this is interrupted, run the same command again: events already present are skipped.`);
    return withServices(config, async ({ ingest }) => {
      let progress: ImportProgress = { imported: 0, skipped: 0 };
      try {
        const { imported, skipped, createdProjects } = await ingest.importEvents(events, (p) => (progress = p));
        for (const p of createdProjects) console.log(`Created project "${p}".`);
        console.log(`Imported ${plural(imported, "event")} as historical events (no notifications); skipped ${skipped} already present.`);
        return 0;
      } catch (error) {
        if (progress.imported) console.error(`Stored ${plural(progress.imported, "event")} before this failure; run the same command again to import the rest.`);
        throw error;
      }
    });
  },
};

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? "" : "s"}`;

function openOut(path: string): number {
  try {
    return openSync(path, "w");
  } catch (error) {
    throw new UsageError(`cannot write ${path}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
  }
}
