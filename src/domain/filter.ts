// An event filter checked in memory, for live views: the same answers as the store's SQL for the
// same filter (test/unit/filter.test.ts checks that on random events and filters).
import type { EventFilter } from "../model/filter.ts";
import { searchTokens } from "../store/search-tokens.ts";
import { type StoredEvent, tagText } from "../model/event.ts";

export function eventMatcher(filter: EventFilter): (e: StoredEvent) => boolean {
  const { projectId, channel, userId, event, tags = [], terms = [], from, to, liveOnly } = filter;
  const last = terms.length - 1;
  return (e) => {
    if (projectId !== undefined && e.projectId !== projectId) return false;
    if (channel !== undefined && e.channel !== channel) return false;
    if (userId !== undefined && e.userId !== userId) return false;
    if (event !== undefined && e.name !== event) return false;
    if (liveOnly && e.historical) return false;
    if (from !== undefined && e.ts < from) return false;
    if (to !== undefined && e.ts >= to) return false;
    for (const [key, value] of tags) {
      const v = e.tags?.[key];
      if (v === undefined || tagText(v) !== value) return false;
    }
    if (terms.length) {
      // As the index does: each word anywhere in the name or description, the last as a prefix.
      const words = [...searchTokens(e.name), ...searchTokens(e.description ?? "")];
      if (!terms.every((t, i) => words.some((w) => (i === last ? w.startsWith(t) : w === t)))) return false;
    }
    return true;
  };
}
