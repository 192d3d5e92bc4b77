ALTER TABLE "idempotency_keys" ADD COLUMN "expires_at" bigint;--> statement-breakpoint
CREATE INDEX "idempotency_keys_expires" ON "idempotency_keys" USING btree ("expires_at");