-- Ingest write cost (issue 7, part 3).
-- The running totals are updated in place by every block (a few hundred rows each): with free room on
-- their pages those updates are HOT (no new index entry, less WAL) instead of moving each row to another
-- page. Only pages written from now on keep the room; existing tables are not rewritten.
ALTER TABLE principal_stats SET (fillfactor = 70);
ALTER TABLE stx_balances SET (fillfactor = 70);
ALTER TABLE ft_balances SET (fillfactor = 70);
ALTER TABLE nft_balances SET (fillfactor = 70);

-- The principal index kept two indexes on (principal, block_height): one over canonical rows, one (with the
-- ordinal) over numbered rows. Every principal row of every block paid for both (a random b-tree insert
-- each, ~20% of the table's insert cost and WAL). One index over all rows serves the same reads: the
-- ordinal at a height (`ordinal IS NOT NULL` is an index condition), a principal's rows at a height or
-- above the tip (few rows, the visibility filter on the heap), in the same order.
CREATE INDEX principal_txs_principal_height_idx ON principal_txs (principal, block_height, ordinal);
DROP INDEX principal_txs_height_idx;
DROP INDEX principal_txs_height_ordinal_idx;

-- No statistics for the wide payload columns (hex, JSON, Clarity reprs): no statement filters, joins or
-- groups on them, and computing their statistics (sorting sampled jsonb and long strings) was most of the
-- cost of every ANALYZE of these tables, autovacuum's included, while the chain grows.
ALTER TABLE txs
  ALTER COLUMN payload SET STATISTICS 0,
  ALTER COLUMN post_conditions SET STATISTICS 0,
  ALTER COLUMN raw_tx SET STATISTICS 0,
  ALTER COLUMN raw_result SET STATISTICS 0,
  ALTER COLUMN result_repr SET STATISTICS 0;
ALTER TABLE mempool_txs
  ALTER COLUMN payload SET STATISTICS 0,
  ALTER COLUMN post_conditions SET STATISTICS 0,
  ALTER COLUMN raw_tx SET STATISTICS 0;
ALTER TABLE events
  ALTER COLUMN value SET STATISTICS 0,
  ALTER COLUMN value_repr SET STATISTICS 0;
ALTER TABLE observer_messages ALTER COLUMN payload SET STATISTICS 0;
