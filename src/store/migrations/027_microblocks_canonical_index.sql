-- Block by burn block height lists the canonical microblocks streamed on the block's parent (accepted) and on
-- the block itself (streamed). Chains since Nakamoto stream almost none, so the microblocks table stays a few
-- pages and the planner scanned all of it twice per request (seq scan + sort: 118 rows on the 1M-tx bench
-- chain, ~40 µs of PostgreSQL CPU a request, half the statement's). This partial index holds only canonical
-- microblocks, in stream order, with their hashes: once the table is more than a page or two and vacuumed (a
-- served database is: bench/run.ts vacuums before loading it, autovacuum does elsewhere), each lookup is an
-- index-only probe (the statement's backend CPU 80 → 61 µs a call on a copy of the 1M chain's blocks and
-- microblocks; test/api/block-by-burn-height.test.ts reads the plan). Written only when a microblock is stored
-- or flips canonical, both rare beside txs.
CREATE INDEX microblocks_canonical_parent_idx ON microblocks (parent_index_block_hash, microblock_sequence)
  INCLUDE (microblock_hash) WHERE microblock_canonical;
