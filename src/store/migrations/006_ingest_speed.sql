-- Ingest speed (issue 7).
-- The raw message log keeps every payload (a block of 200 txs is ~300 kB of JSON): compressed with lz4
-- where the server has it (PostgreSQL built with lz4, as Debian's is), ~5x cheaper to write than the
-- default pglz. Old rows keep their compression; reading either is transparent.
DO $$
BEGIN
  IF EXISTS (SELECT 1 FROM pg_settings WHERE name = 'default_toast_compression' AND 'lz4' = ANY (enumvals)) THEN
    ALTER TABLE observer_messages ALTER COLUMN payload SET COMPRESSION lz4;
  END IF;
END
$$;
