// identify on PostgreSQL (the rest of profiles is store/aggregates/profiles.ts): it keeps the users
// search's rows of the properties it sends (users-search.ts) in the same statement as the profile.
import { sql } from "drizzle-orm";
import type { ProfileRepository } from "../store.ts";
import { batchOf, type Ctx } from "./context.ts";
import { patchParts } from "./users-search.ts";

/** `old` (JSON text, or null for none) with `patch` merged in, nulls removing keys. */
// The patch goes as text, then to jsonb: a parameter the driver saw as jsonb would be sent as a JSON string.
export const mergeJson = (old: unknown, patch: string) =>
  sql`jsonb_strip_nulls(coalesce(${old}, '{}')::jsonb || ${patch}::text::jsonb)::text`;

export function identify(ctx: Ctx): Pick<ProfileRepository, "identify"> {
  return {
    async identify(projectId, userId, properties, now) {
      const patch = JSON.stringify(properties);
      const { parts, gone } = patchParts(userId, properties);
      // One round trip. A property sent as it was writes no search row (and no index entry).
      await ctx.db.execute(sql`
        with profile as (
          insert into profiles (project_id, user_id, properties, created_at, updated_at)
          values (${projectId}, ${userId}, ${mergeJson(null, patch)}, ${now}, ${now})
          on conflict (project_id, user_id) do update set properties = ${mergeJson(sql`profiles.properties`, patch)}, updated_at = ${now}),
        gone as (
          delete from user_search
           where project_id = ${projectId} and user_id = ${userId} and part in (select jsonb_array_elements_text(${JSON.stringify(gone)}::text::jsonb))),
        parts as (
          insert into user_search (project_id, user_id, part, words)
          select ${projectId}, ${userId}, t.part, t.words from jsonb_to_recordset(${JSON.stringify(parts)}::text::jsonb) as t(part text, words text)
          on conflict (project_id, user_id, part) do update set words = excluded.words where user_search.words is distinct from excluded.words)
        select 1`);
      batchOf(ctx).found({ user: { projectId, userId } });
    },
  };
}
