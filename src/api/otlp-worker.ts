// A worker thread that reads OTLP exports (otlp-decode.ts): one at a time, answering each with
// what it will write (in parts) or the error that refuses it.
import { toPlain } from "../errors.ts";
import type { PlannedLogs } from "../domain/otlp/plan.ts";
import { type FromDecoder, partsOf, planExport, type ToDecoder } from "./otlp-decode.ts";

declare const self: Worker;

self.onmessage = ({ data }: MessageEvent<ToDecoder>) => {
  let parts: ReturnType<typeof partsOf>;
  try {
    parts = partsOf<unknown>(planExport({ ...data, bytes: new Uint8Array(data.bytes) }));
  } catch (error) {
    self.postMessage({ ok: false, error: toPlain(error) } satisfies FromDecoder);
    return;
  }
  parts.forEach((part, i) =>
    self.postMessage({ ok: true, part: part as PlannedLogs, last: i === parts.length - 1 } satisfies FromDecoder),
  );
};
