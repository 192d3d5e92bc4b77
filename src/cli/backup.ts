// signalboard backup [FILE]: a consistent copy of the database, taken online (VACUUM INTO runs
// in one read transaction, so the copy is a single moment even while the server keeps writing).
import { existsSync, mkdirSync, rmSync, statSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { type Command, configFrom, parse, UsageError, withStore } from "./command.ts";

export const backup: Command = {
  summary: "copy the database consistently, while the server runs",
  usage: "signalboard backup [FILE] [--force] [--data-dir DIR]   (default FILE: DATA_DIR/backups/signalboard-YYYYMMDD-HHMMSS.db)",
  async run(argv) {
    const { values, positionals } = parse(argv, { force: { type: "boolean" } });
    const config = configFrom(values);
    const stamp = new Date().toISOString().replace(/[-:]/g, "").replace("T", "-").slice(0, 15);
    const file = resolve(positionals[0] ?? join(config.dataDir, "backups", `signalboard-${stamp}.db`));
    if (existsSync(file) && !values.force) throw new UsageError(`${file} already exists; choose another name or add --force`);
    mkdirSync(dirname(file), { recursive: true });
    const started = performance.now();
    await withStore(config, (store) => {
      if (values.force) rmSync(file, { force: true });
      store.sqlite.query("VACUUM INTO ?").run(file);
    });
    console.log(`Backed up to ${file} (${(statSync(file).size / 1e6).toFixed(1)} MB in ${((performance.now() - started) / 1000).toFixed(1)} s).`);
    console.log(file);
    return 0;
  },
};
