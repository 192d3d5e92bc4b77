// The two reads alert rules' rounds make of the events (the rules themselves are
// store/aggregates/alerts.ts): how many matched in a window, and when the latest one happened.
import { and, max, sql } from "drizzle-orm";
import type { AlertReads } from "../aggregates/alerts.ts";
import type { Ctx } from "./context.ts";
import { analyticsStore } from "./analytics.ts";
import { conditions } from "./event-source.ts";
import { events } from "./schema.ts";

export function alertReads(ctx: Ctx): AlertReads {
  const { db } = ctx;
  const analytics = analyticsStore(ctx);
  return {
    async counts(questions) {
      const out: number[] = [];
      for (const { filter, from, to } of questions)
        out.push(
          (await analytics.series({ filter, bounds: [from, to], measure: "events", groupBy: null, limit: 1 }))[0]
            ?.total ?? 0,
        );
      return out;
    },

    async latest(filters, until) {
      const out: (number | null)[] = [];
      for (const filter of filters) {
        const [found] = await db
          .select({ ts: max(events.ts) })
          .from(events)
          .where(and(...conditions(filter, filter.tags ?? []), sql`${events.ts} <= ${until}`));
        out.push(found?.ts === null || found?.ts === undefined ? null : Number(found.ts));
      }
      return out;
    },
  };
}
