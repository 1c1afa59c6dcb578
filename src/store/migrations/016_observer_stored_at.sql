-- When this indexer stored each observer message (its transaction's start time). The ingest lag that /ready
-- and the metrics report is now − stored_at of the newest message: received_at is the time the message was
-- first received, which a replay takes from its file (a demo chain's are from 2024), kept for export.
-- (A constant default: no table rewrite; rows stored before this migration get its time.)
ALTER TABLE observer_messages ADD COLUMN stored_at timestamptz NOT NULL DEFAULT now();
