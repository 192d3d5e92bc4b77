// A server's stream (SSE) that a page follows for as long as it is open.

const RECONNECT_MAX_MS = 30000;

export type StreamHandlers = {
  /** The stream is open (again). */
  open?: () => void;
  /** The stream broke: EventSource is retrying, or it was refused and is opened again later. */
  error?: () => void;
  /** It was refused (an answer other than a stream, such as a 404): called before it is opened again later. */
  refused?: () => void;
  /** Listeners by event name. */
  on: Record<string, (e: MessageEvent<string>) => void>;
};

/**
 * Follows the stream at `url()` (asked at each connection). EventSource retries network errors
 * itself; a refused answer closes it for good, and it is opened again after 1 s, 2 s, 4 s… (at
 * most 30 s). Closed when the page unloads.
 */
export function follow(url: () => URL, handlers: StreamHandlers): { close(): void } {
  let source: EventSource | null = null;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let attempts = 0;
  const close = () => {
    clearTimeout(timer);
    if (source) source.close();
    source = null;
  };
  const connect = () => {
    const stream = new EventSource(url());
    source = stream;
    stream.addEventListener("open", () => {
      attempts = 0;
      handlers.open?.();
    });
    for (const [name, listener] of Object.entries(handlers.on)) stream.addEventListener(name, listener);
    stream.addEventListener("error", () => {
      handlers.error?.();
      if (stream.readyState !== EventSource.CLOSED) return;
      close();
      timer = setTimeout(connect, Math.min(RECONNECT_MAX_MS, 1000 * 2 ** attempts++));
      handlers.refused?.();
    });
  };
  connect();
  window.addEventListener("beforeunload", close);
  return { close };
}
