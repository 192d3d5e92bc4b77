ALTER TABLE "check_keys" ADD COLUMN "badge_key" text;--> statement-breakpoint
CREATE UNIQUE INDEX "check_keys_badge_key" ON "check_keys" USING btree ("badge_key");