// The writer thread (store/writer-thread.ts): its own connection to the database, and the writes of
// ingest run by name in its group commit (the same Writer as on the main thread), answered in one
// message per batch.
import { ingestWrites } from "./domain/ingest-writes.ts";
import { toPlain } from "./errors.ts";
import { closeStore, openStore, type Store } from "./store/index.ts";
import type { FromWriter, ToWriter, WriteAnswer } from "./store/writer-thread.ts";

declare const self: Worker;

const writes = ingestWrites as Record<string, (store: Store, args: never) => unknown>;
let store: Store | null = null;
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

self.onmessage = ({ data }: MessageEvent<ToWriter>) => {
  try {
    if (data.type === "open") store = openStore(data.path, data.sync);
    else if (data.type === "writes") {
      const s = store!;
      for (const { id, name, args } of data.writes) {
        const write = writes[name];
        if (!write) {
          answer({ id, ok: false, error: toPlain(new Error(`unknown write ${name}`)) });
          continue;
        }
        s.writer.submit(() => write(s, args as never)).then(
          (value) => answer({ id, ok: true, value }),
          (error) => answer({ id, ok: false, error: toPlain(error) }),
        );
      }
    } else if (data.type === "stop") {
      store?.writer.flush(); // commits what is queued; its answers go out on the next turn, before "stopped"
      setImmediate(() => {
        if (store) closeStore(store);
        store = null;
        self.postMessage({ type: "stopped" } satisfies FromWriter);
      });
    }
  } catch (error) {
    self.postMessage({ type: "failed", message: String((error as Error)?.message ?? error) } satisfies FromWriter);
  }
};
