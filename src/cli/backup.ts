// signalboard backup [FILE|DIR/]: a consistent copy of the database, taken online while the server runs.
import { statSync } from "node:fs";
import { join, resolve } from "node:path";
import { type Command, configFrom, managementOptions, parse, withServices } from "./command.ts";

export const backup: Command = {
  summary: "copy the database consistently, while the server runs",
  usage:
    "signalboard backup [FILE|DIR/] [--force] [--data-dir DIR]   (default: DATA_DIR/backups/signalboard-YYYYMMDD-HHMMSS.db; a directory gets a file of that name inside it)",
  async run(argv) {
    const { values, positionals } = parse(argv, { ...managementOptions, force: { type: "boolean" } });
    const config = configFrom(values, { installed: true });
    const stamp = new Date().toISOString().replace(/[-:]/g, "").replace("T", "-").slice(0, 15);
    const dated = `signalboard-${stamp}.db`;
    const named = positionals[0];
    // A directory (one that exists, or a path ending in /) gets a dated file inside it, as the default does.
    const file =
      named === undefined
        ? join(config.dataDir, "backups", dated)
        : isDirectory(named)
          ? join(resolve(named), dated)
          : resolve(named);
    const started = performance.now();
    await withServices(config, values, (services) => services.backup(file, { replace: values.force ?? false }));
    console.log(
      `Backed up to ${file} (${(statSync(file).size / 1e6).toFixed(1)} MB in ${((performance.now() - started) / 1000).toFixed(1)} s).`,
    );
    console.log(file);
    return 0;
  },
};

function isDirectory(path: string): boolean {
  if (path.endsWith("/")) return true;
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}
