CREATE TABLE `digests` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`project_id` integer NOT NULL,
	`name` text NOT NULL,
	`frequency` text NOT NULL,
	`hour` integer NOT NULL,
	`weekday` integer,
	`time_zone` text NOT NULL,
	`integration_ids` text DEFAULT '[]' NOT NULL,
	`emails` text DEFAULT '[]' NOT NULL,
	`enabled` integer DEFAULT true NOT NULL,
	`created_at` integer NOT NULL,
	`last_period` text,
	`last_sent_at` integer,
	`last_success_at` integer,
	`last_error` text,
	`last_error_at` integer,
	FOREIGN KEY (`project_id`) REFERENCES `projects`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `digests_project` ON `digests` (`project_id`);--> statement-breakpoint
ALTER TABLE `events` ADD `priority` integer DEFAULT 3 NOT NULL;--> statement-breakpoint
ALTER TABLE `integrations` ADD `config` text DEFAULT '{}' NOT NULL;--> statement-breakpoint
ALTER TABLE `integrations` ADD `secrets` text DEFAULT '{}' NOT NULL;--> statement-breakpoint
ALTER TABLE `integrations` ADD `filter` text;--> statement-breakpoint
ALTER TABLE `integrations` ADD `template` text;--> statement-breakpoint
-- Each integration's settings move into config and secrets (JSON, the API's keys) before the old columns go.
UPDATE `integrations` SET
	`config` = CASE `kind` WHEN 'webhook' THEN json_object('url', `url`) WHEN 'ntfy' THEN json_object('url', `url`, 'topic', `topic`) ELSE '{}' END,
	`secrets` = CASE
		WHEN `kind` IN ('discord', 'slack') THEN json_object('webhook_url', `url`)
		WHEN `kind` = 'webhook' AND `secret` IS NOT NULL THEN json_object('secret', `secret`)
		WHEN `kind` = 'ntfy' AND `secret` IS NOT NULL THEN json_object('token', `secret`)
		ELSE '{}' END;--> statement-breakpoint
ALTER TABLE `integrations` DROP COLUMN `url`;--> statement-breakpoint
ALTER TABLE `integrations` DROP COLUMN `topic`;--> statement-breakpoint
ALTER TABLE `integrations` DROP COLUMN `secret`;--> statement-breakpoint
ALTER TABLE `push_subscriptions` ADD `tags` text;--> statement-breakpoint
ALTER TABLE `push_subscriptions` ADD `min_priority` integer DEFAULT 1 NOT NULL;