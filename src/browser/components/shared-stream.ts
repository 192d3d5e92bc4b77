import { component } from "../alpine.ts";
import { follow } from "../stream.ts";

/**
 * A shared page's stream (web/shares.ts): the server says only that something shown changed
 * ("refresh"), and the page's cards (or its status) are asked again, as a project's dashboard
 * asks its cards (components/dashboard.ts, which listens for sb-events).
 */
export const sharedStream = component(() => {
  let stream: { close(): void } | null = null;
  let trailing: ReturnType<typeof setTimeout> | undefined;
  /**
   * Cards are answered from what was worked out up to a refresh ago (live/answers.ts): asked again
   * once more a refresh after the last change, so the last change always shows.
   */
  const refresh = (every: number) => {
    window.dispatchEvent(new CustomEvent("sb-events"));
    clearTimeout(trailing);
    trailing = setTimeout(() => window.dispatchEvent(new CustomEvent("sb-events")), every + 250);
  };
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
        on: {
          refresh: () => {
            const holder = this.$root.closest<HTMLElement>("[data-refresh-ms]");
            refresh(Number(holder?.dataset.refreshMs) || 5000);
          },
        },
      });
    },
    destroy() {
      stream?.close();
      clearTimeout(trailing);
    },
    statusText() {
      return this.connected ? "(connected)" : "(reconnecting…)";
    },
  };
});
