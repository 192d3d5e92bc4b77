CREATE TABLE `audit_log` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`at` integer NOT NULL,
	`action` text NOT NULL,
	`actor` text NOT NULL,
	`actor_user_id` integer,
	`ip` text,
	`subject` text NOT NULL,
	`detail` text
);
--> statement-breakpoint
CREATE INDEX `audit_log_at` ON `audit_log` (`at`);--> statement-breakpoint
CREATE TABLE `token_projects` (
	`token_id` integer NOT NULL,
	`project_id` integer NOT NULL,
	PRIMARY KEY(`token_id`, `project_id`),
	FOREIGN KEY (`token_id`) REFERENCES `api_tokens`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`project_id`) REFERENCES `projects`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `token_projects_project` ON `token_projects` (`project_id`);--> statement-breakpoint
CREATE TABLE `user_projects` (
	`user_id` integer NOT NULL,
	`project_id` integer NOT NULL,
	PRIMARY KEY(`user_id`, `project_id`),
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`project_id`) REFERENCES `projects`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `user_projects_project` ON `user_projects` (`project_id`);--> statement-breakpoint
ALTER TABLE `api_tokens` ADD `limited` integer DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE `users` ADD `limited` integer DEFAULT false NOT NULL;--> statement-breakpoint
-- Roles: accounts made before roles could do everything but what only the owner may, so each
-- "member" becomes an "admin" (members, tokens, integrations and settings) and keeps what it could do.
UPDATE `users` SET role = 'admin' WHERE role = 'member';