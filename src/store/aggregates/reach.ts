// The projects a limited token or user reaches, by name: both keep them in a table of their own
// (token_projects, user_projects), and both show them sorted.
import { asc, eq, inArray } from "drizzle-orm";
import type { PgColumn } from "drizzle-orm/pg-core";
import type { Sql } from "./sql.ts";

type Link = { owner: PgColumn; project: PgColumn };

/** `rows` with `projects`: the names of each limited one's projects, null for one that reaches every project. */
export async function withProjects<R extends { id: number; limited: boolean }>(
  { db, t }: Sql,
  link: Link,
  rows: R[],
): Promise<(Omit<R, "limited"> & { projects: string[] | null })[]> {
  const ids = rows.filter((r) => r.limited).map((r) => r.id);
  const names = new Map<number, string[]>(ids.map((id) => [id, []]));
  if (ids.length) {
    const found = await db
      .select({ owner: link.owner, name: t.projects.name })
      .from(link.owner.table)
      .innerJoin(t.projects, eq(t.projects.id, link.project))
      .where(inArray(link.owner, ids))
      .orderBy(asc(t.projects.name));
    for (const r of found) names.get(r.owner as number)!.push(r.name);
  }
  return rows.map(({ limited, ...row }) => ({ ...row, projects: limited ? names.get(row.id)! : null }));
}
