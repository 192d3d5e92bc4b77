// npm run build → dist/signalboard: one executable with the runtime, the code, the migrations and
// the dashboard's assets inside. --minify-whitespace/--minify-syntax, not --minify: identifier
// mangling breaks Elysia's compiled handlers. .env and bunfig.toml in the working directory of a
// production host must not change the binary's behaviour, so autoloading them is off.
import { $ } from "bun";

const outfile = process.argv[2] ?? "dist/signalboard";
// --bytecode: the code is parsed at build time, not at every start (half the start-up time).
// The search indexer's, the writer thread's and the OTLP decoder's workers are entry points of their own, so the binary carries them too.
await $`bun build --compile --bytecode --minify-whitespace --minify-syntax --no-compile-autoload-dotenv --no-compile-autoload-bunfig src/main.ts src/store/sqlite/search-worker.ts src/writer-worker.ts src/api/otlp-worker.ts --outfile ${outfile}`;
console.log(`built ${outfile}`);
