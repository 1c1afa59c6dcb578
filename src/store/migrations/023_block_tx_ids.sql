-- Each block keeps the ids of the txs mined in it (its anchored txs and the microblock txs it confirms),
-- newest first, as the JSON array text the v1 block answer carries (`txs`). A block's tx set is fixed when it
-- arrives (ingest/apply-block.ts writes the list with the block; store/write/genesis.ts rewrites it when block
-- 1 adopts block 0's rows), so block by burn block height reads one row instead of the block's ~200 tx rows
-- through txs_block_idx and the heap (46 buffers on the small bench chain, 0.6 ms of PostgreSQL a request and
-- a p99 of 101 ms on the 1M-tx chain) and sends the text as it is.
ALTER TABLE blocks ADD COLUMN tx_ids_json text;
UPDATE blocks b SET tx_ids_json = (
  SELECT '[' || coalesce(string_agg(to_json(t.tx_id)::text, ',' ORDER BY t.microblock_sequence DESC, t.tx_index DESC), '') || ']'
  FROM txs t WHERE t.index_block_hash = b.index_block_hash);
ALTER TABLE blocks ALTER COLUMN tx_ids_json SET NOT NULL;
-- Random hex ids do not compress: storing the ~14 KB lists uncompressed saves pglz's attempt at every insert
-- and its decompression at every read.
ALTER TABLE blocks ALTER COLUMN tx_ids_json SET STORAGE EXTERNAL;
