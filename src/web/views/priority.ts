// An event's priority as the dashboard shows and asks for it: 1 (min) to 5 (urgent), 3 the default.
import { type Html, html } from "../html.ts";

export const PRIORITY_NAMES: Record<number, string> = { 1: "min", 2: "low", 3: "default", 4: "high", 5: "urgent" };

/** A badge on an event whose priority is not the default; nothing for 3. */
export function priorityBadge(priority: number | undefined): Html | string {
  if (priority === undefined || priority === 3) return "";
  return html`<span class="badge priority priority-${priority}" title="Priority ${priority} of 5" data-testid="priority">${priority >= 4 ? "▲" : "▼"} ${PRIORITY_NAMES[priority] ?? priority}</span>`;
}

/** A select of the least priority a receiver hears about (1: every event). */
export function prioritySelect(name: string, chosen: number): Html {
  return html`<select name="${name}">${[1, 2, 3, 4, 5].map((p) => html`<option value="${p}"${p === chosen ? " selected" : ""}>${p === 1 ? "any (1+)" : `${p}+ (${PRIORITY_NAMES[p]})`}</option>`)}</select>`;
}
