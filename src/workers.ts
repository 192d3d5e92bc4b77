// Where the worker threads' code is. scripts/build.ts makes each worker an entry point of the
// compiled binary, kept under the same path relative to src/ inside the binary's own file system;
// from source it is that path relative to this file, which sits at src/, the root of both.
export type WorkerEntry = "store/sqlite/search-worker.ts" | "writer-worker.ts";

const COMPILED_ROOT = "/$bunfs/root/";

export function workerPath(entry: WorkerEntry): string {
  return Bun.main.startsWith(COMPILED_ROOT) ? COMPILED_ROOT + entry : new URL(`./${entry}`, import.meta.url).pathname;
}

export function startWorker(entry: WorkerEntry): Worker {
  return new Worker(workerPath(entry));
}
