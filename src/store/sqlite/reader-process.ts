// A reader process (see readers.ts): the server's own program, started with the database's path,
// that answers reads by repository and method name on a read-only connection of its own, one at a
// time, until its parent goes away. Being a process, it can be stopped at once, whatever SQLite is
// doing (a worker thread cannot be stopped inside a query).
import { toPlain } from "../../errors.ts";
import { openReader } from "./db.ts";
import { repositories } from "./repositories.ts";
import { searchPath } from "./search.ts";

export type ReaderRequest = { id: number; aggregate: string; method: string; args: unknown[] };
export type ReaderAnswer =
  | { ready: true }
  | { id: number; ok: true; value: unknown }
  | { id: number; ok: false; error: ReturnType<typeof toPlain> };

/** Serves reads on `databasePath` over the IPC channel; resolves when the parent has gone. */
export function serveReads(databasePath: string): Promise<void> {
  const { db, searching } = openReader(databasePath, searchPath(databasePath));
  // Access changes are the writer's business: nothing here takes access away.
  const repos = repositories(db, searching, { count: 0 }) as unknown as Record<
    string,
    Record<string, (...a: unknown[]) => unknown>
  >;
  const send = (answer: ReaderAnswer) => process.send!(answer);
  process.on("message", async (request: ReaderRequest) => {
    try {
      const fn = repos[request.aggregate]?.[request.method];
      if (!fn) throw new Error(`no read ${request.aggregate}.${request.method}`);
      send({ id: request.id, ok: true, value: await fn(...request.args) });
    } catch (error) {
      send({ id: request.id, ok: false, error: toPlain(error) });
    }
  });
  send({ ready: true });
  return new Promise((resolve) => process.once("disconnect", () => resolve()));
}

if (import.meta.main) {
  void serveReads(process.argv[2]!).then(() => process.exit(0));
}
