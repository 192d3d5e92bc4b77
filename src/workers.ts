// Where the worker threads' code is. scripts/build.ts makes each worker an entry point of the
// compiled binary, kept under the same path relative to src/ inside the binary's own file system;
// from source it is that path relative to this file, which sits at src/, the root of both. The
// reader processes are the program itself, started with READER_ARG (or, from source, their own file).
export type WorkerEntry = "store/sqlite/search-worker.ts" | "writer-worker.ts" | "api/otlp-worker.ts";

const COMPILED_ROOT = "/$bunfs/root/";

export function workerPath(entry: WorkerEntry): string {
  return Bun.main.startsWith(COMPILED_ROOT) ? COMPILED_ROOT + entry : new URL(`./${entry}`, import.meta.url).pathname;
}

export function startWorker(entry: WorkerEntry): Worker {
  return new Worker(workerPath(entry));
}

/** The first argument that makes the program a reader process (store/sqlite/reader-process.ts) instead of a command. */
export const READER_ARG = "__reader";

/** How to start a reader process on the database at `databasePath`: the binary itself, or from source the reader's own file. */
export function readerCommand(databasePath: string): string[] {
  if (Bun.main.startsWith(COMPILED_ROOT)) return [process.execPath, READER_ARG, databasePath];
  return [process.execPath, new URL("./store/sqlite/reader-process.ts", import.meta.url).pathname, databasePath];
}
