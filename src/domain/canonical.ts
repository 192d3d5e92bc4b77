// JSON with object keys in sorted order, at every depth: two values that differ only in the order
// their keys were written in get the same text (for digests of requests and of event content).
export function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) => {
    if (v === null || typeof v !== "object" || Array.isArray(v)) return v;
    const sorted: Record<string, unknown> = Object.create(null); // so a key named __proto__ is kept like any other
    for (const key of Object.keys(v).sort()) sorted[key] = (v as Record<string, unknown>)[key];
    return sorted;
  });
}
