CREATE TABLE `check_keys` (
	`project_id` integer PRIMARY KEY NOT NULL,
	`ping_key` text NOT NULL,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`project_id`) REFERENCES `projects`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `check_keys_ping_key` ON `check_keys` (`ping_key`);--> statement-breakpoint
CREATE TABLE `checks` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`project_id` integer NOT NULL,
	`name` text NOT NULL,
	`slug` text NOT NULL,
	`uuid` text NOT NULL,
	`push_token` text NOT NULL,
	`channel` text NOT NULL,
	`period` integer,
	`cron` text,
	`tz` text,
	`grace` integer NOT NULL,
	`paused` integer NOT NULL,
	`state` text NOT NULL,
	`since` integer NOT NULL,
	`last_ping` integer,
	`last_start` integer,
	`last_start_rid` text,
	`runs` text NOT NULL,
	`next_due` integer,
	`last_duration` integer,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`project_id`) REFERENCES `projects`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `checks_uuid` ON `checks` (`uuid`);--> statement-breakpoint
CREATE UNIQUE INDEX `checks_push_token` ON `checks` (`push_token`);--> statement-breakpoint
CREATE INDEX `checks_project_slug` ON `checks` (`project_id`,`slug`);--> statement-breakpoint
CREATE INDEX `checks_next_due` ON `checks` (`next_due`);