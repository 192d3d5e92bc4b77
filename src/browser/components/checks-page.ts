import { component } from "../alpine.ts";
import { addChannel } from "../channels.ts";
import { fragment } from "../dom.ts";
import { follow } from "../stream.ts";
import { refreshTimes } from "../times.ts";
import { toast } from "../toasts.ts";

/**
 * The Checks page, live: the page's stream says which checks were pinged (their slugs), and each
 * one's row is loaded again as the server renders it (state, last ping, next due, the run bar). A
 * check the page does not show yet (made by a ping's ?create=1, or elsewhere) loads the list afresh.
 * An up check turns late at its due time with nothing sent: its row (data-late-at) is loaded again then.
 */
export const checksPage = component(() => {
  let stream: { close(): void } | null = null;
  const timers = new Set<ReturnType<typeof setTimeout>>();
  /** Rows in `root` that turn late later are loaded again when they do (a day at most, then again). */
  const watchLate = (root: Element) => {
    const rows = root.matches(".check-row") ? [root] : [...root.querySelectorAll(".check-row")];
    for (const row of rows as HTMLElement[]) {
      const at = Number(row.dataset.lateAt);
      if (!at) continue;
      const timer = setTimeout(
        () => {
          timers.delete(timer);
          if (row.isConnected) void load(row.dataset.rowUrl!, row);
        },
        // Already past by this clock (the server's may be behind): again in a while, not at once.
        Math.min(at > Date.now() ? at - Date.now() + 500 : 5000, 86_400_000),
      );
      timers.add(timer);
    }
  };
  const swap = (old: Element, markup: string) => {
    const next = fragment(markup);
    if (!next) return;
    // What the reader opened stays open.
    if (old.querySelector("details[open]")) next.querySelector("details")?.setAttribute("open", "");
    old.replaceWith(next);
    refreshTimes(next);
    if (window.htmx) window.htmx.process(next);
    watchLate(next);
  };
  const load = async (url: string, old: Element) => {
    const answer = await fetch(url, { headers: { "HX-Request": "true" }, credentials: "same-origin" });
    if (answer.ok) swap(old, await answer.text());
  };
  return {
    connected: false,
    init() {
      watchLate(this.$root);
      stream = follow(() => new URL(this.$root.dataset.liveUrl!, location.href), {
        open: () => {
          this.connected = true;
          this.$root.dataset.following = "1"; // for whoever reads the page's markup (and the tests)
        },
        error: () => {
          this.connected = false;
        },
        on: {
          check: (e) => void this.pinged(e.data),
          channel: (e) => addChannel(e.data),
          toast: (e) => {
            const data = JSON.parse(e.data);
            toast(data.text, "", data.href);
          },
        },
      });
    },
    destroy() {
      stream?.close();
      for (const timer of timers) clearTimeout(timer);
    },
    async pinged(slug: string) {
      const row = [...this.$root.querySelectorAll<HTMLElement>(".check-row")].find((r) => r.dataset.slug === slug);
      if (row) await load(row.dataset.rowUrl!, row);
      else {
        const list = this.$root.querySelector("#check-list");
        if (list) await load(this.$root.dataset.listUrl!, list);
      }
    },
  };
});
