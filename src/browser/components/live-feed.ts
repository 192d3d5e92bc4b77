import { component } from "../alpine.ts";
import { addChannel } from "../channels.ts";
import { fragment } from "../dom.ts";
import { fitValues } from "../fit-values.ts";
import { follow } from "../stream.ts";
import { refreshTimes } from "../times.ts";
import { toast } from "../toasts.ts";

/**
 * The live feed. New events arrive as HTML over SSE. At the top of the page they slide in;
 * scrolled down, a pill counts them instead of moving what you are reading. In a burst the
 * server sends only the newest few and says how many more there were ("skipped"): the pill
 * counts those too, and clicking it loads the feed afresh. After a disconnect (a server
 * restart, a flaky network) it reconnects by itself and the server replays what was missed
 * after the last event id it saw; an event already shown is skipped.
 */
export const liveFeed = component(() => {
  let stream: { close(): void } | null = null;
  return {
    lastId: 0,
    pending: [] as HTMLElement[],
    skipped: 0,
    connected: false,
    init() {
      this.lastId = Number(this.$root.dataset.lastId) || 0;
      stream = follow(
        () => {
          const url = new URL(this.$root.dataset.liveUrl!, location.href);
          url.searchParams.set("last_event_id", String(this.lastId));
          return url;
        },
        {
          open: () => {
            this.connected = true;
          },
          error: () => {
            this.connected = false;
          },
          on: {
            feed: (e) => this.onFeed(e),
            skipped: (e) => {
              this.skipped += JSON.parse(e.data).count || 0;
              window.dispatchEvent(new CustomEvent("sb-events"));
            },
            metric: (e) => this.onMetric(e),
            channel: (e) => addChannel(e.data),
            toast: (e) => {
              const data = JSON.parse(e.data);
              toast(data.text, "", data.href);
            },
            reload: () => location.reload(),
          },
        },
      );
      window.addEventListener(
        "scroll",
        () => {
          if (this.atTop() && this.pending.length && !this.skipped) this.showPending();
        },
        { passive: true },
      );
    },
    destroy() {
      stream?.close();
    },
    // "At the top" means the top of the feed is on screen, wherever the feed starts on the page.
    atTop() {
      return this.$root.getBoundingClientRect().top > -100;
    },
    onFeed(e: MessageEvent<string>) {
      window.dispatchEvent(new CustomEvent("sb-events"));
      const id = Number(e.lastEventId);
      if (id > this.lastId) this.lastId = id;
      const item = fragment(e.data);
      if (!item || document.getElementById(item.id)) return;
      if (this.atTop()) this.insert(item);
      else if (!this.pending.some((p) => p.id === item.id)) this.pending.push(item);
    },
    insert(item: HTMLElement) {
      const list = this.$root.querySelector(".events")!;
      const empty = this.$root.querySelector(".empty");
      if (empty) empty.remove();
      list.prepend(item);
      refreshTimes(item);
      if (window.htmx) window.htmx.process(item);
    },
    hasPending() {
      return this.pending.length + this.skipped > 0;
    },
    pendingText() {
      const n = this.pending.length + this.skipped;
      return "↑ " + n + " new event" + (n === 1 ? "" : "s");
    },
    showPending() {
      // Events the server only counted are not on the page: load the feed as it is now.
      if (this.skipped) {
        location.reload();
        return;
      }
      const items = this.pending;
      this.pending = [];
      for (const item of items) if (!document.getElementById(item.id)) this.insert(item);
      if (this.$root.getBoundingClientRect().top < 0) this.$root.scrollIntoView({ block: "start" });
    },
    onMetric(e: MessageEvent<string>) {
      window.dispatchEvent(new CustomEvent("sb-events"));
      const widget = fragment(e.data);
      if (!widget) return;
      const existing = document.getElementById(widget.id);
      const grid = document.getElementById("metrics");
      if (existing) existing.replaceWith(widget);
      else if (grid) grid.appendChild(widget);
      refreshTimes(widget);
      fitValues(widget);
    },
    statusText() {
      return this.connected ? "Live" : "Reconnecting…";
    },
    statusClass() {
      return this.connected ? "live" : "down";
    },
  };
});
