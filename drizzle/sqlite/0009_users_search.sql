CREATE TABLE `profile_changes` (
	`seq` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`project_id` integer NOT NULL,
	`user_id` text
);
--> statement-breakpoint
-- The users search's index lives in search.db, filled by the indexer thread (src/store/sqlite/
-- users-index.ts) from these records: identify pays for one small row, never for indexing the
-- profile's text. Existing profiles are indexed by the indexer when it starts.
CREATE TRIGGER `profiles_added` AFTER INSERT ON `profiles` BEGIN
	INSERT INTO `profile_changes` (`project_id`, `user_id`) VALUES (new.project_id, new.user_id);
END;
--> statement-breakpoint
CREATE TRIGGER `profiles_changed` AFTER UPDATE OF `properties` ON `profiles` WHEN old.properties IS NOT new.properties BEGIN
	INSERT INTO `profile_changes` (`project_id`, `user_id`) VALUES (new.project_id, new.user_id);
END;
--> statement-breakpoint
CREATE TRIGGER `profiles_removed` AFTER DELETE ON `profiles` BEGIN
	INSERT INTO `profile_changes` (`project_id`, `user_id`) VALUES (old.project_id, old.user_id);
END;
--> statement-breakpoint
CREATE TRIGGER `projects_removed` AFTER DELETE ON `projects` BEGIN
	INSERT INTO `profile_changes` (`project_id`, `user_id`) VALUES (old.id, NULL);
END;
