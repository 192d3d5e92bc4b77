ALTER TABLE `deliveries` ADD `lease_owner` text;--> statement-breakpoint
ALTER TABLE `deliveries` ADD `lease_until` integer;