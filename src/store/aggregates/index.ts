// The plain aggregates: one implementation each for both stores (sql.ts says how). The tuned ones
// (events, metrics, profiles, analytics, and the reads of alerts) stay in store/sqlite and store/pg.
import type { Repositories } from "../store.ts";
import { chartStore } from "./charts.ts";
import type { Sql } from "./sql.ts";

export type PlainAggregate = "charts";

export function plainRepositories(sql: Sql): Pick<Repositories, PlainAggregate> {
  return {
    charts: chartStore(sql),
  };
}
