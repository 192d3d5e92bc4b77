// The writer thread (store/sqlite/writer-thread.ts): its own store on the database, and the writes
// of ingest run by name in its group commit (store.tx, as on the main thread), answered in one
// message per batch.
import { ingestWrites } from "./domain/ingest-writes.ts";
import { toPlain } from "./errors.ts";
import { openSqliteStore, type SqliteStore } from "./store/sqlite/index.ts";
import type { FromWriter, ToWriter, WriteAnswer } from "./store/sqlite/writer-thread.ts";
import type { Repositories } from "./store/store.ts";

declare const self: Worker;

const writes = ingestWrites as Record<string, (tx: Repositories, args: never) => Promise<unknown>>;
let store: SqliteStore | null = null;
let outbox: WriteAnswer[] = [];
let scheduled = false;

function answer(a: WriteAnswer): void {
  outbox.push(a);
  if (scheduled) return;
  scheduled = true;
  setImmediate(() => {
    scheduled = false;
    const answers = outbox;
    outbox = [];
    self.postMessage({ type: "answers", answers } satisfies FromWriter);
  });
}

function failed(error: unknown): void {
  self.postMessage({ type: "failed", message: String((error as Error)?.message ?? error) } satisfies FromWriter);
}

self.onmessage = ({ data }: MessageEvent<ToWriter>) => {
  try {
    if (data.type === "open") store = openSqliteStore(data.path, { sync: data.sync });
    else if (data.type === "writes") {
      const s = store!;
      for (const { id, name, args } of data.writes) {
        const write = writes[name];
        if (!write) {
          answer({ id, ok: false, error: toPlain(new Error(`unknown write ${name}`)) });
          continue;
        }
        s.tx((tx) => write(tx, args as never)).then(
          (value) => answer({ id, ok: true, value }),
          (error) => answer({ id, ok: false, error: toPlain(error) }),
        );
      }
    } else if (data.type === "stop") {
      // Commits what is queued; its answers go out on the next turn, before "stopped".
      const closing = store?.close() ?? Promise.resolve();
      store = null;
      closing.then(() => setImmediate(() => self.postMessage({ type: "stopped" } satisfies FromWriter)), failed);
    }
  } catch (error) {
    failed(error);
  }
};
