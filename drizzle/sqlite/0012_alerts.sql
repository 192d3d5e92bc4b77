CREATE TABLE `alerts` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`project_id` integer NOT NULL,
	`name` text NOT NULL,
	`kind` text NOT NULL,
	`filter` text NOT NULL,
	`period` integer,
	`cron` text,
	`tz` text,
	`grace` integer NOT NULL,
	`window` integer,
	`metric` text,
	`above` real,
	`below` real,
	`repeat` integer,
	`paused` integer NOT NULL,
	`state` text NOT NULL,
	`since` integer NOT NULL,
	`last_checked` integer,
	`last_notified` integer,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`project_id`) REFERENCES `projects`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `alerts_project` ON `alerts` (`project_id`);