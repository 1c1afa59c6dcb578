-- The text of a large observer message, after its first piece (issue 14, item 3). One row holding a 40 MB
-- message was one statement of ~3 s on PGlite (which runs on the process's main thread: /health waited for
-- it) and grew its WASM heap by several copies of the text, never given back. The text is now cut into pieces
-- of bounded size (src/store/message-text.ts): observer_messages.payload holds the first, this table the
-- others, each written by a statement of its own in the message's transaction. Rows stored before this
-- migration keep their whole text in payload (they have no pieces), which reads back the same.
CREATE TABLE observer_message_pieces (
  message_id bigint NOT NULL REFERENCES observer_messages (id) ON DELETE CASCADE,
  -- 1, 2, ...: piece 0 is observer_messages.payload
  piece_number integer NOT NULL,
  piece text NOT NULL,
  PRIMARY KEY (message_id, piece_number)
);
-- as observer_messages.payload (006, 012): no plan filters on the text, and lz4 where the server has it
ALTER TABLE observer_message_pieces ALTER COLUMN piece SET STATISTICS 0;
DO $$
BEGIN
  IF EXISTS (SELECT 1 FROM pg_settings WHERE name = 'default_toast_compression' AND 'lz4' = ANY (enumvals)) THEN
    ALTER TABLE observer_message_pieces ALTER COLUMN piece SET COMPRESSION lz4;
  END IF;
END
$$;
