ALTER TABLE `platform_outbox` ADD `attempts` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `platform_outbox` ADD `lease_until` integer;--> statement-breakpoint
ALTER TABLE `platform_outbox` ADD `updated_at` text;--> statement-breakpoint
-- A row left `sending` before the claim columns has no lease to end: made sendable again, as the old sweep did.
UPDATE `platform_outbox` SET `status` = 'pending' WHERE `status` = 'sending';
