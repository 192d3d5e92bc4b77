// The dashboard's own script: the browser code in src/browser/ (TypeScript modules), bundled into
// one classic script. assets.ts imports this `with { type: "macro" }`: Bun runs it while it
// transpiles assets.ts (from source, in `npm start` and `npm test`) or bundles it (`npm run build`,
// whose binary then carries the script), and puts the script in its place as a string. A macro may
// not call Bun.build (the bundler would wait on itself), so it runs Bun's own `bun build`.
import { join } from "node:path";

const ROOT = join(import.meta.dir, "../..");

export function appBundle(): string {
  // From the repository's root, so the bundle (and its hashed URL) is the same wherever it is made.
  const built = Bun.spawnSync(
    [process.execPath, "build", "src/browser/main.ts", "--target=browser", "--format=iife", '--banner="use strict";'],
    { cwd: ROOT, stdout: "pipe", stderr: "pipe" },
  );
  if (!built.success) throw new Error(`bundling src/browser/main.ts failed:\n${built.stderr.toString()}`);
  return built.stdout.toString();
}
