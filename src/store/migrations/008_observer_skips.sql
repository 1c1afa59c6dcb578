-- A message that did not fit the index when it arrived (a microblock stream not built on the chain tip,
-- e.g. delivered ahead of its parent block by a retrying node) is answered 200 and kept in the log, but it
-- changed nothing: it does not count as delivered, so the same message delivered again once it fits is
-- applied. An identical message that still does not fit is not logged twice (the second index finds it).
ALTER TABLE observer_messages ADD COLUMN skipped boolean NOT NULL DEFAULT false;
ALTER TABLE observer_messages DROP CONSTRAINT observer_messages_content_hash_key;
CREATE UNIQUE INDEX observer_messages_applied_hash_idx ON observer_messages (content_hash) WHERE NOT skipped;
CREATE INDEX observer_messages_skipped_hash_idx ON observer_messages (content_hash) WHERE skipped;
