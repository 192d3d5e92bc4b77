// Which notify events reach a device or an integration: a filter on channels (or all but some),
// tags and a least priority. No filter, or an empty one, lets every notify event of the project
// through, as before filters existed. Alert notices are events of the `alerts` channel, so a filter
// can send them to some integrations only (channels: ["alerts"]) and keep them from others
// (exclude_channels: ["alerts"]).
import { z } from "zod";
import { tagText, type Tags } from "../model/event.ts";
import type { RouteFilter } from "../model/notification.ts";
import * as rule from "./input-fields.ts";

const MAX_CHANNELS = 50;
const MAX_TAGS = 10;

const channelList = z
  .array(rule.channelName, { error: "must be a list of channel names" })
  .max(MAX_CHANNELS, `at most ${MAX_CHANNELS} channels`);

/** The filter as the API and the CLI send it; null, absent or empty means every notify event. */
export const routeFilter = z
  .object(
    {
      channels: channelList
        .optional()
        .meta({ description: "Only events of these channels (empty: any).", examples: [["payments", "alerts"]] }),
      exclude_channels: channelList
        .optional()
        .meta({ description: "Never events of these channels (such as alerts).", examples: [["alerts"]] }),
      tags: z
        .record(
          z.string().regex(/^[a-z0-9-]{1,64}$/, "tag keys use 1-64 lowercase letters, digits or dashes"),
          z.union([rule.text(rule.LIMITS.tagValue), z.number(), z.boolean()], {
            error: "tag values are strings, numbers or booleans",
          }),
        )
        .refine((tags) => Object.keys(tags).length <= MAX_TAGS, `at most ${MAX_TAGS} tags`)
        .transform((tags) => Object.fromEntries(Object.entries(tags).map(([k, v]) => [k, tagText(v)])))
        .optional()
        .meta({ description: "Tags the event must have, with these values.", examples: [{ env: "prod" }] }),
      min_priority: rule.priority
        .optional()
        .meta({ description: "Leave out events of a lower priority (1-5).", examples: [4] }),
    },
    { error: 'must be an object like {"channels": ["alerts"], "tags": {"env": "prod"}, "min_priority": 4}' },
  )
  .strict()
  .nullish()
  .transform((f): RouteFilter | null => normalizeFilter(f ?? null));

/** Null for a filter that lets everything through; otherwise only the fields that say something. */
export function normalizeFilter(f: RouteFilter | null): RouteFilter | null {
  if (!f) return null;
  const out: RouteFilter = {};
  if (f.channels?.length) out.channels = [...new Set(f.channels)];
  if (f.exclude_channels?.length) out.exclude_channels = [...new Set(f.exclude_channels)];
  if (f.tags && Object.keys(f.tags).length) out.tags = f.tags;
  if (f.min_priority !== undefined && f.min_priority > rule.PRIORITY.min) out.min_priority = f.min_priority;
  return Object.keys(out).length ? out : null;
}

export type Routed = { channel: string; tags: Tags | null; priority: number };

export function matchesRoute(filter: RouteFilter | null, e: Routed): boolean {
  if (!filter) return true;
  if (filter.channels?.length && !filter.channels.includes(e.channel)) return false;
  if (filter.exclude_channels?.includes(e.channel)) return false;
  if (filter.min_priority !== undefined && e.priority < filter.min_priority) return false;
  for (const key in filter.tags) {
    const value = e.tags?.[key];
    if (value === undefined || tagText(value) !== filter.tags[key]) return false;
  }
  return true;
}

/** How a filter reads in a list: "#alerts only · plan=pro · priority 4+", or "every notify event". */
export function describeFilter(f: RouteFilter | null): string {
  if (!f) return "every notify event";
  const parts: string[] = [];
  if (f.channels?.length) parts.push(f.channels.map((c) => `#${c}`).join(", "));
  if (f.exclude_channels?.length) parts.push(`not ${f.exclude_channels.map((c) => `#${c}`).join(", ")}`);
  for (const [k, v] of Object.entries(f.tags ?? {})) parts.push(`${k}=${v}`);
  if (f.min_priority) parts.push(`priority ${f.min_priority}+`);
  return parts.join(" · ");
}
