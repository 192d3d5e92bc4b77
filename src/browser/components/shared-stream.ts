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
    revoked: false,
    init() {
      stream = follow(() => new URL(this.$root.dataset.streamUrl!, location.href), {
        open: () => {
          this.connected = true;
        },
        error: () => {
          this.connected = false;
        },
        // A refused stream may be a revoked link: the page itself then answers 404, and the page
        // says so (a wall screen would otherwise go on showing what was true when it was revoked).
        refused: () => {
          void fetch(location.href, { cache: "no-store", credentials: "omit", redirect: "manual" })
            .then((answer) => {
              if (answer.status !== 404) return;
              this.revoked = true;
              stream?.close();
            })
            .catch(() => {});
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
      if (this.revoked) return "(no longer: this link was revoked)";
      return this.connected ? "(connected)" : "(reconnecting…)";
    },
  };
});
