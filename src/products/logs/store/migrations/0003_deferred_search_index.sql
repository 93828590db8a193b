-- The search index is built after each append instead of row by row inside it (log-store.ts,
-- indexPending): the append's transaction no longer pays for trigram tokenising, and a query
-- with `q` first indexes whatever is pending. `meta.fts_upto` is the highest seq indexed; only
-- rows at or below it are in entries_fts, so only those are removed from it on delete.
DROP TRIGGER `entries_fts_insert`;
--> statement-breakpoint
DROP TRIGGER `entries_fts_delete`;
--> statement-breakpoint
CREATE TRIGGER `entries_fts_delete` AFTER DELETE ON `entries`
WHEN old.seq <= coalesce((SELECT value FROM `meta` WHERE key = 'fts_upto'), 0) BEGIN
  INSERT INTO `entries_fts` (`entries_fts`, rowid, message) VALUES ('delete', old.seq, old.message);
END;
--> statement-breakpoint
INSERT OR REPLACE INTO `meta` (key, value) SELECT 'fts_upto', coalesce(max(seq), 0) FROM `entries`;
