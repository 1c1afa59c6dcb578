-- The demo chain `start` indexes into an empty database (cli/demo.ts): one row from before its first
-- message until after its last. A row without `completed_at` is a demo whose indexing was stopped part-way
-- (a signal, a crash): the next `start` indexes it again (what was applied is skipped as duplicate
-- messages) instead of serving half a chain as if it were whole.
CREATE TABLE demo_chain (
  only_row boolean PRIMARY KEY DEFAULT true CHECK (only_row),
  blocks integer NOT NULL,
  started_at timestamptz NOT NULL DEFAULT now(),
  completed_at timestamptz
);
