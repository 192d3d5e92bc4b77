// Tables whose DDL is hand-written in a migration, because drizzle-kit cannot express it; they are
// declared here only so queries stay typed. drizzle.config.ts does not read this file.
import { integer, primaryKey, sqliteTable, text } from "drizzle-orm/sqlite-core";

/**
 * One row per (event, tag), keyed for "events of project P with tag k=v, newest first": WITHOUT
 * ROWID, so the key is the table and an insert touches one B-tree instead of three. No foreign key
 * (it would need a second index): deleting events deletes their tags explicitly (store/projects.ts).
 */
export const eventTags = sqliteTable(
  "event_tags",
  {
    projectId: integer("project_id").notNull(),
    key: text("key").notNull(),
    value: text("value").notNull(), // strings as sent; numbers and booleans as their JSON text
    ts: integer("ts").notNull(),
    eventId: integer("event_id").notNull(),
  },
  // As drizzle/sqlite/0001 makes it: what `signalboard copy` reads its rows in the order of.
  (t) => [primaryKey({ columns: [t.projectId, t.key, t.value, t.ts, t.eventId] })],
);
