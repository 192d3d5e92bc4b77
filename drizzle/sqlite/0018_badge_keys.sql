ALTER TABLE `check_keys` ADD `badge_key` text;--> statement-breakpoint
CREATE UNIQUE INDEX `check_keys_badge_key` ON `check_keys` (`badge_key`);