import { component } from "../alpine.ts";
import { follow } from "../stream.ts";

/**
 * A shared page's stream (web/shares.ts): the server says only that something shown changed
 * ("refresh"), and the page's cards (or its status) are asked again, as a project's dashboard
 * asks its cards (components/dashboard.ts, which listens for sb-events).
 */
export const sharedStream = component(() => {
  let stream: { close(): void } | null = null;
  return {
    connected: false,
    init() {
      stream = follow(() => new URL(this.$root.dataset.streamUrl!, location.href), {
        open: () => {
          this.connected = true;
        },
        error: () => {
          this.connected = false;
        },
        on: { refresh: () => window.dispatchEvent(new CustomEvent("sb-events")) },
      });
    },
    destroy() {
      stream?.close();
    },
    statusText() {
      return this.connected ? "live" : "reconnecting…";
    },
  };
});
