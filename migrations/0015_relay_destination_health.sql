-- Webhook relay destination health (issue 18): since when every attempt to a destination has failed
-- (null while it is healthy), and why it was disabled ('failing' when the relay disabled it after
-- five days of failures; null when enabled or disabled by its owner).
ALTER TABLE `webhook_destinations` ADD `failing_since` text;--> statement-breakpoint
ALTER TABLE `webhook_destinations` ADD `disabled_reason` text;
