ALTER TABLE `idempotency_keys` ADD `expires_at` integer;--> statement-breakpoint
CREATE INDEX `idempotency_keys_expires` ON `idempotency_keys` (`expires_at`);