ALTER TABLE `checks` ADD `notify_after` integer DEFAULT 1 NOT NULL;--> statement-breakpoint
ALTER TABLE `checks` ADD `streak` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `checks` ADD `notified` text DEFAULT 'up' NOT NULL;--> statement-breakpoint
ALTER TABLE `checks` ADD `counted` integer;
--> statement-breakpoint
-- A check down before this release was told so: its last notice said down.
UPDATE `checks` SET `notified` = 'down', `streak` = 1 WHERE `state` = 'down';
