CREATE TABLE `hooks` (
	`id` text PRIMARY KEY NOT NULL,
	`project_id` integer NOT NULL,
	`kind` text NOT NULL,
	`name` text NOT NULL,
	`channel` text NOT NULL,
	`secret` text,
	`config` text NOT NULL,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`project_id`) REFERENCES `projects`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `hooks_project` ON `hooks` (`project_id`);--> statement-breakpoint
CREATE TABLE `shares` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`project_id` integer NOT NULL,
	`kind` text NOT NULL,
	`key` text NOT NULL,
	`charts` text NOT NULL,
	`checks` text NOT NULL,
	`alerts` text NOT NULL,
	`metrics` text NOT NULL,
	`title` text NOT NULL,
	`text` text NOT NULL,
	`created_by` text NOT NULL,
	`created_at` integer NOT NULL,
	`revoked_at` integer,
	FOREIGN KEY (`project_id`) REFERENCES `projects`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `shares_key` ON `shares` (`key`);--> statement-breakpoint
CREATE INDEX `shares_project` ON `shares` (`project_id`);