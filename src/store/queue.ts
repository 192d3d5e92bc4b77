// What both stores' delivery queues share: how a claim picks deliveries of different targets.

/** How many due deliveries a claim looks at per free slot, to find one each of different targets. */
export const CANDIDATES = 4;

/** The first delivery of each target, in the order given, at most `limit`. */
export function firstPerTarget(list: { id: number; target: string; targetId: number }[], limit: number): number[] {
  const seen = new Set<string>();
  const ids: number[] = [];
  for (const d of list) {
    const key = `${d.target}:${d.targetId}`;
    if (seen.has(key)) continue;
    seen.add(key);
    ids.push(d.id);
    if (ids.length === limit) break;
  }
  return ids;
}
