// The search indexer's thread (see search.ts). Started by the server with the database's path;
// every 100 ms it indexes what is new, in steps, until it has caught up. On "stop" (handled
// between steps) it closes its connection and says so.
import type { Database } from "bun:sqlite";
import { openIndexerConnection, searchIndexer } from "./search.ts";

declare const self: Worker;

export type IndexerMessage = { type: "start"; databasePath: string } | { type: "stop" };
export type IndexerReport = { type: "error"; message: string } | { type: "stopped" };

const STEP = 2000;
let db: Database | null = null;
let timer: ReturnType<typeof setInterval> | undefined;
let failing = false;
let catchingUp = false;

/** One step; while there is more, the next follows at once (after any message, such as "stop"). */
function catchUp(indexPending: (limit: number) => number): void {
  if (catchingUp || !db) return;
  try {
    const more = indexPending(STEP) >= STEP;
    failing = false;
    if (more) {
      catchingUp = true;
      setTimeout(() => {
        catchingUp = false;
        catchUp(indexPending);
      }, 0);
    }
  } catch (error) {
    // Reported once per bad spell (a full disk, say); the next tick tries again.
    if (!failing)
      self.postMessage({ type: "error", message: String((error as Error)?.message ?? error) } satisfies IndexerReport);
    failing = true;
  }
}

self.onmessage = ({ data }: MessageEvent<IndexerMessage>) => {
  if (data.type === "start" && !db) {
    db = openIndexerConnection(data.databasePath);
    const { indexPending } = searchIndexer(db);
    catchUp(indexPending);
    timer = setInterval(() => catchUp(indexPending), 100);
  } else if (data.type === "stop") {
    clearInterval(timer);
    db?.close();
    db = null;
    self.postMessage({ type: "stopped" } satisfies IndexerReport);
  }
};
