CREATE TABLE `maintenance_windows` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`project_id` integer NOT NULL,
	`name` text NOT NULL,
	`starts_at` integer,
	`ends_at` integer,
	`cron` text,
	`tz` text,
	`length` integer,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`project_id`) REFERENCES `projects`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `maintenance_windows_project` ON `maintenance_windows` (`project_id`);--> statement-breakpoint
ALTER TABLE `alerts` ADD `notify_after` integer DEFAULT 1 NOT NULL;--> statement-breakpoint
ALTER TABLE `alerts` ADD `streak` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `alerts` ADD `notified` text DEFAULT 'ok' NOT NULL;
--> statement-breakpoint
-- A rule firing before this release was told: its last notice said firing.
UPDATE `alerts` SET `notified` = `state`, `streak` = CASE WHEN `state` = 'firing' THEN 1 ELSE 0 END;
