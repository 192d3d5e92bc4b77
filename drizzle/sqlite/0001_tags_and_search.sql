-- Tag filters: WITHOUT ROWID so the primary key is the table, ordered for keyset pages of
-- "project P, tag k=v, newest first". Declared for queries in src/store/manual-tables.ts.
CREATE TABLE `event_tags` (
	`project_id` integer NOT NULL,
	`key` text NOT NULL,
	`value` text NOT NULL,
	`ts` integer NOT NULL,
	`event_id` integer NOT NULL,
	PRIMARY KEY (`project_id`, `key`, `value`, `ts`, `event_id`)
) WITHOUT ROWID;
--> statement-breakpoint
-- Full-text search over event names and descriptions. Contentless (the text stays in `events`)
-- with contentless_delete so a deleted event leaves the index too. Rows are added in batches by
-- the indexer (src/store/search.ts), not by a trigger: per-row FTS5 inserts cost several times the
-- event insert itself, batched ones a fraction of it.
CREATE VIRTUAL TABLE `events_fts` USING fts5(
	`event`, `description`,
	content='', contentless_delete=1, tokenize='unicode61 remove_diacritics 2'
);
--> statement-breakpoint
CREATE TRIGGER `events_fts_delete` AFTER DELETE ON `events` BEGIN
	DELETE FROM `events_fts` WHERE rowid = old.id;
END;
