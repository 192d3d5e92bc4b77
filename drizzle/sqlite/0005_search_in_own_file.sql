-- The full-text index moves to its own file (search.db, see src/store/search.ts), written by a
-- worker thread so that indexing and FTS5's merges never hold up a request. This database keeps
-- what the worker needs: the ids of deleted events, in order, so they leave the index too.
DROP TRIGGER IF EXISTS `events_fts_delete`;
--> statement-breakpoint
DROP TABLE IF EXISTS `events_fts`;
--> statement-breakpoint
DELETE FROM `meta` WHERE `key` = 'search.indexed_through';
--> statement-breakpoint
CREATE TABLE `deleted_events` (
	`seq` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`event_id` integer NOT NULL
);
--> statement-breakpoint
CREATE TRIGGER `events_deleted` AFTER DELETE ON `events` BEGIN
	INSERT INTO `deleted_events` (`event_id`) VALUES (old.id);
END;
