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
 */
export const checksPage = component(() => {
  let stream: { close(): void } | null = null;
  const swap = (old: Element, markup: string) => {
    const next = fragment(markup);
    if (!next) return;
    // What the reader opened stays open.
    if (old.querySelector("details[open]")) next.querySelector("details")?.setAttribute("open", "");
    old.replaceWith(next);
    refreshTimes(next);
    if (window.htmx) window.htmx.process(next);
  };
  const load = async (url: string, old: Element) => {
    const answer = await fetch(url, { headers: { "HX-Request": "true" }, credentials: "same-origin" });
    if (answer.ok) swap(old, await answer.text());
  };
  return {
    connected: false,
    init() {
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
