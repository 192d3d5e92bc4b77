import { fragment } from "./dom.ts";

/**
 * A channel created live takes its place in the sidebar by name, as a reload would list it, and
 * what waits for it on the page (the Alerts page's Notices, data-shows-with-channel) shows.
 */
export function addChannel(markup: string): void {
  const item = fragment(markup);
  const list = document.getElementById("channel-list");
  if (!item || !list) return;
  const name = (li: Element) => (li.textContent || "").trim().replace(/^#\s*/, "");
  if (!document.getElementById(item.id)) {
    const after = [...list.children].find((li) => name(li) > name(item));
    list.insertBefore(item, after || null);
  }
  for (const el of document.querySelectorAll<HTMLElement>("[data-shows-with-channel]"))
    if (el.dataset.showsWithChannel === name(item)) el.hidden = false;
}
