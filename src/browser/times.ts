// Times on every page: absolute ones in the viewer's zone, relative ones ("3 min ago") with the
// absolute time on hover, kept fresh as time passes and as htmx swaps parts of the page in.

// One way to write a date and time on every page (the server writes the same in UTC, in
// src/web/views/events.ts): a medium date and a long time with its zone, or the date alone.
const DATE_TIME: Intl.DateTimeFormatOptions = { dateStyle: "medium", timeStyle: "long" };
const DATE: Intl.DateTimeFormatOptions = { dateStyle: "medium" };

export const dateTime = (ms: number): string => new Date(ms).toLocaleString(undefined, DATE_TIME);

function relative(ms: number, now: number): string {
  const s = Math.round((now - ms) / 1000);
  const abs = Math.abs(s);
  if (abs < 45) return "just now";
  let value: number;
  let unit: string;
  if (abs < 3600) [value, unit] = [Math.round(abs / 60), "min"];
  else if (abs < 86400) [value, unit] = [Math.round(abs / 3600), "h"];
  else if (abs < 86400 * 45) [value, unit] = [Math.round(abs / 86400), "d"];
  else return new Date(ms).toLocaleDateString(undefined, DATE);
  return s >= 0 ? value + " " + unit + " ago" : "in " + value + " " + unit;
}

export function refreshTimes(root?: ParentNode): void {
  const now = Date.now();
  // Absolute times: the server writes them in UTC; shown in the viewer's time zone.
  for (const el of (root || document).querySelectorAll<HTMLTimeElement>("time[data-absolute]:not([data-local])")) {
    const ms = Date.parse(el.getAttribute("datetime") ?? "");
    if (Number.isNaN(ms)) continue;
    el.textContent = dateTime(ms);
    el.dataset.local = "1";
  }
  for (const el of (root || document).querySelectorAll<HTMLTimeElement>("time[data-relative]")) {
    const ms = Date.parse(el.getAttribute("datetime") ?? "");
    if (Number.isNaN(ms)) continue;
    el.textContent = relative(ms, now);
    if (!el.dataset.local) {
      el.title = dateTime(ms);
      el.dataset.local = "1";
    }
  }
}

/** Times are written when the page loads, when htmx swaps a part in, and every 30 s. */
export function keepTimesFresh(): void {
  document.addEventListener("DOMContentLoaded", () => refreshTimes());
  document.addEventListener("htmx:afterSettle", (e) => refreshTimes(e.target as Element));
  setInterval(() => refreshTimes(), 30000);
}
