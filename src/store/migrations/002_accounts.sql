-- Accounts: STX lock state, historic (until_block) balance reads, and the token-offering vesting schedule.

-- PoX print events of the boot pox-2/3/4 contracts that change a stacker's lock (stack-stx, stack-increase,
-- stack-extend, their delegate-* forms, handle-unlock) are kept as contract-log rows (kind 5) that also carry
-- the lock they leave behind, so the lock state of a principal is one index range over `events`:
--   pox_name        the operation (`stack-increase`, `handle-unlock`, ...); null on every other row
--   locked_address  the stacker (as on stx_lock rows)
--   amount          µSTX locked after the operation
--   unlock_height   burn height the lock ends at after the operation
ALTER TABLE events ADD COLUMN pox_name text;

-- Fees paid as of a past height: by the sender of a non-sponsored tx, by the sponsor of a sponsored one.
CREATE INDEX txs_sender_height_idx ON txs (sender_address, block_height);
CREATE INDEX txs_sponsor_height_idx ON txs (sponsor_address, block_height) WHERE sponsored;

-- A principal's transactions up to a past height are ordinals 1..k: k is found with one probe here.
CREATE INDEX principal_txs_height_ordinal_idx ON principal_txs (principal, block_height, ordinal)
  WHERE ordinal IS NOT NULL;

-- Stacks 1.0 token-offering vesting schedule (rows `address,value,blocks` of the configured VESTING_FILE):
-- `value` µSTX of `address` unlock at Stacks block height `block`.
CREATE TABLE token_offering_locked (
  address text COLLATE "C" NOT NULL,
  value numeric NOT NULL,
  block integer NOT NULL
);
CREATE INDEX token_offering_locked_address_idx ON token_offering_locked (address, block);

-- Which vesting file the table holds (sha256 of its content), so start-up reloads it only when it changed.
CREATE TABLE token_offering_source (
  id boolean PRIMARY KEY DEFAULT true CHECK (id),
  sha256 text NOT NULL,
  file text NOT NULL,
  row_count integer NOT NULL,
  loaded_at timestamptz NOT NULL DEFAULT now()
);
