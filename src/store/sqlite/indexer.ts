// The search indexer's thread (search-worker.ts), as the server's store runs it: started with the
// store, stopped with it; stop() waits until it has let go of its files.
import { log } from "../../logger.ts";
import { startWorker } from "../../workers.ts";
import type { IndexerMessage, IndexerReport } from "./search-worker.ts";

export function startIndexer(databasePath: string) {
  const worker = startWorker("store/sqlite/search-worker.ts");
  let stopped: () => void = () => {};
  worker.onerror = (event) =>
    log.error("the search indexer failed; full-text search misses new events until a restart", {
      error: event.message,
    });
  worker.onmessage = ({ data }: MessageEvent<IndexerReport>) => {
    if (data.type === "error") log.warn("search indexing failed; will retry", { error: data.message });
    else if (data.type === "stopped") stopped();
  };
  worker.postMessage({ type: "start", databasePath } satisfies IndexerMessage);
  return {
    async stop(): Promise<void> {
      const done = new Promise<void>((resolve) => (stopped = resolve));
      worker.postMessage({ type: "stop" } satisfies IndexerMessage);
      await Promise.race([done, Bun.sleep(2000)]);
      worker.terminate();
    },
  };
}
