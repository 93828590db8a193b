-- Full-text index over entry messages for the entry query's `q`: FTS5 with the trigram tokenizer
-- matches any substring of 3+ characters (case-insensitive) from the index instead of a LIKE scan.
-- External content: the text lives once, in `entries`; triggers keep the index in step with
-- appends and with retention's deletes (entries are never updated).
CREATE VIRTUAL TABLE `entries_fts` USING fts5(message, content='entries', content_rowid='seq', tokenize='trigram');
--> statement-breakpoint
CREATE TRIGGER `entries_fts_insert` AFTER INSERT ON `entries` BEGIN
  INSERT INTO `entries_fts` (rowid, message) VALUES (new.seq, new.message);
END;
--> statement-breakpoint
CREATE TRIGGER `entries_fts_delete` AFTER DELETE ON `entries` BEGIN
  INSERT INTO `entries_fts` (`entries_fts`, rowid, message) VALUES ('delete', old.seq, old.message);
END;
