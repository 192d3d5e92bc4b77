// The colours of channels, event names and tags' values on every chart and legend of the
// dashboard: a slot of the palette src/browser/charts/colors.ts has for each theme (the same slot
// in light and dark mode), derived from the name, so a name has one colour on every chart of a page.
import type { Channel } from "../model/project.ts";

/** Colours in each of the palettes of src/browser/charts/colors.ts. */
export const PALETTE_SIZE = 9;

/**
 * Each name's colour, as a palette slot: the slot its name picks, or, when a name before it took
 * that one, the next free one (so up to nine names side by side never share a colour). `first`:
 * the names that come first, in their order, whether shown or not (a project's channels, oldest
 * first: a channel's colour then depends on the project alone, not on which chart shows it, and
 * stays when channels are added); the other names follow by name.
 */
export function colorSlots(names: string[], first: string[] = []): number[] {
  const claimed = new Set(first);
  const rest = [...new Set(names)].filter((n) => !claimed.has(n)).sort();
  const taken = new Set<number>();
  const slots = new Map<string, number>();
  for (const name of [...first, ...rest]) {
    let slot = Number(Bun.hash.crc32(name) % PALETTE_SIZE);
    while (taken.has(slot) && taken.size < PALETTE_SIZE) slot = (slot + 1) % PALETTE_SIZE;
    taken.add(slot);
    slots.set(name, slot);
  }
  return names.map((name) => slots.get(name)!);
}

/** A project's channels as colorSlots takes them: oldest (created first) first. */
export function channelsByAge(channels: Channel[]): string[] {
  return [...channels].sort((a, b) => a.id - b.id).map((c) => c.name);
}
