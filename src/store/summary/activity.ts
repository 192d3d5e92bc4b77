// Reading the activity rows (store/summary/deltas.ts) for buckets of time: which of a month's
// days lie wholly in one bucket, which the buckets cut (and so need their hours), and each row's
// buckets, in order, each once. Series of users (series.ts) and retention (retention.ts) count on it.
import { HOUR, MONTH_DAYS, monthStart, place } from "./deltas.ts";
import type { ActivityAsk, Cover, MonthMap, Span, SummaryReads } from "./reads.ts";

export type { MonthMap };

/** Each month's map of the buckets' whole hours. */
export function monthMaps(covers: Cover[]): Map<number, MonthMap> {
  const maps = new Map<number, MonthMap>();
  covers.forEach((c, bucket) => {
    if (!c.hours) return;
    const [h0, h1] = c.hours;
    for (let month = place(h0 * HOUR).month; month <= place((h1 - 1) * HOUR).month; month++) {
      const base = monthStart(month) / HOUR;
      let map = maps.get(month);
      if (!map) {
        map = { day: new Int32Array(MONTH_DAYS).fill(-1), slot: new Int32Array(MONTH_DAYS * 24).fill(-1) };
        maps.set(month, map);
      }
      const a = Math.max(h0, base) - base;
      const z = Math.min(h1, monthStart(month + 1) / HOUR) - base;
      for (let h = a; h < z; h++) map.slot[h] = bucket;
    }
  });
  for (const map of maps.values()) {
    for (let k = 0; k < MONTH_DAYS; k++) {
      const first = map.slot[k * 24]!;
      let same = true;
      for (let h = 1; h < 24 && same; h++) same = map.slot[k * 24 + h] === first;
      map.day[k] = same ? first : -2;
    }
  }
  return maps;
}

/** The buckets that lie in more than one month: a user has a row in each, so may be seen twice there. */
export function crossingMonths(maps: Map<number, MonthMap>): number[] {
  const monthsOf = new Map<number, Set<number>>();
  for (const [month, map] of maps)
    for (const bucket of map.slot)
      if (bucket >= 0) (monthsOf.get(bucket) ?? monthsOf.set(bucket, new Set()).get(bucket)!).add(month);
  return [...monthsOf].filter(([, months]) => months.size > 1).map(([bucket]) => bucket);
}

/**
 * The activity rows asked for (kind, key, a value or all, the months of `maps`), each handed to
 * `see` with its value, its user and the buckets it has a bit of, in time order, each once.
 */
export async function walkActivity(
  reads: SummaryReads,
  ask: Omit<ActivityAsk, "months" | "columns">,
  maps: Map<number, MonthMap>,
  see: (value: string, user: string, buckets: number[]) => void,
): Promise<void> {
  if (!maps.size) return;
  const columns = [...new Set([...maps.values()].flatMap((m) => [...m.day.keys()].filter((k) => m.day[k] === -2)))];
  const position = new Int32Array(MONTH_DAYS).fill(-1);
  columns.forEach((k, i) => (position[k] = 4 + i));
  const months: Span = [Math.min(...maps.keys()), Math.max(...maps.keys())];
  const hits: number[] = [];
  await reads.activity({ ...ask, months, columns }, (rows) => {
    for (const row of rows) {
      const map = maps.get(row[1]);
      if (!map) continue;
      hits.length = 0;
      // Days in time order, and hours within them: a row's buckets come in order, each once.
      for (let days = row[3]; days !== 0; days &= days - 1) {
        const k = 31 - Math.clz32(days & -days);
        const whole = map.day[k]!;
        if (whole >= 0) {
          if (hits.at(-1) !== whole) hits.push(whole);
        } else if (whole === -2) {
          for (let hours = row[position[k]!] as number; hours !== 0; hours &= hours - 1) {
            const bucket = map.slot[k * 24 + 31 - Math.clz32(hours & -hours)]!;
            if (bucket >= 0 && hits.at(-1) !== bucket) hits.push(bucket);
          }
        }
      }
      if (hits.length) see(row[0], row[2], hits);
    }
  });
}
