-- The NFTs a principal holds, a page at a time (store/read/nft-holdings.ts): the owner's custody rows in page
-- order, with what a page's walk needs in each entry (the asset identifier its filter reads, the tx id that
-- tells a page key's row from another's at the same position), so LIMIT/OFFSET and the total are index-only
-- reads over the owner's entries, and only the page's rows are read from the table. The index of 035 it
-- replaces has the same keys and would only cost ingest a second write (F-read-nft-holdings-whole-set).
CREATE INDEX nft_custody_owner_page_idx
  ON nft_custody (owner, block_height, microblock_sequence, tx_index, event_index) INCLUDE (asset_identifier, tx_id);
DROP INDEX nft_custody_owner_idx;
