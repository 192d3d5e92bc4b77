ALTER TABLE `api_tokens` ADD `may_notify` integer DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE `api_tokens` ADD `created_by` text;--> statement-breakpoint
ALTER TABLE `api_tokens` ADD `created_by_user_id` integer;--> statement-breakpoint
ALTER TABLE `integrations` ADD `created_by_user_id` integer;--> statement-breakpoint
-- Public tokens made before the flag existed could notify; they keep doing so until turned off.
UPDATE `api_tokens` SET `may_notify` = 1 WHERE `kind` = 'public';
