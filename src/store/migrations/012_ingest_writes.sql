-- Ingest write cost (issue 7, part 3).
-- The running totals are updated in place by every block (a few hundred rows each): with free room on
-- their pages those updates are HOT (no new index entry, less WAL) instead of moving each row to another
-- page. Only pages written from now on keep the room; existing tables are not rewritten.
ALTER TABLE principal_stats SET (fillfactor = 70);
ALTER TABLE stx_balances SET (fillfactor = 70);
ALTER TABLE ft_balances SET (fillfactor = 70);
ALTER TABLE nft_balances SET (fillfactor = 70);
