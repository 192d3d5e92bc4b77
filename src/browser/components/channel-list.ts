import { component } from "../alpine.ts";
import { addChannel } from "../channels.ts";
import { follow } from "../stream.ts";

/**
 * The sidebar's channels of the open project follow new channels on every page. A page with a
 * stream of its own (a feed, a metric, the checks) gets them there; any other (Alerts, charts, a project's
 * settings) opens a stream of new channels alone.
 */
export const channelList = component(() => {
  let stream: { close(): void } | null = null;
  return {
    init() {
      if (document.querySelector('[x-data="liveFeed"], [x-data="metricPage"], [x-data="checksPage"]')) return;
      stream = follow(() => new URL(this.$root.dataset.channelsUrl!, location.href), {
        open: () => {
          this.$root.dataset.following = "1"; // for whoever reads the page's markup (and the tests)
        },
        on: { channel: (e) => addChannel(e.data) },
      });
    },
    destroy() {
      stream?.close();
    },
  };
});
