// signalboard backup [FILE]: a consistent copy of the database, taken online while the server runs.
import { statSync } from "node:fs";
import { join, resolve } from "node:path";
import { type Command, configFrom, parse, withServices } from "./command.ts";

export const backup: Command = {
  summary: "copy the database consistently, while the server runs",
  usage: "signalboard backup [FILE] [--force] [--data-dir DIR]   (default FILE: DATA_DIR/backups/signalboard-YYYYMMDD-HHMMSS.db)",
  async run(argv) {
    const { values, positionals } = parse(argv, { force: { type: "boolean" } });
    const config = configFrom(values);
    const stamp = new Date().toISOString().replace(/[-:]/g, "").replace("T", "-").slice(0, 15);
    const file = resolve(positionals[0] ?? join(config.dataDir, "backups", `signalboard-${stamp}.db`));
    const started = performance.now();
    await withServices(config, (services) => services.backup(file, { replace: values.force ?? false }));
    console.log(`Backed up to ${file} (${(statSync(file).size / 1e6).toFixed(1)} MB in ${((performance.now() - started) / 1000).toFixed(1)} s).`);
    console.log(file);
    return 0;
  },
};
