ALTER TABLE `emails` ADD `body_in_r2` integer DEFAULT false NOT NULL;--> statement-breakpoint
CREATE INDEX `emails_body_in_d1_idx` ON `emails` (`created_at`) WHERE "emails"."body_in_r2" = 0;