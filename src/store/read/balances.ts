import type { Sql } from '../db.js';
import { EventKind } from '../schema/codes.js';
import { scopeWindow, type AccountScope, type ScopeWindow } from './account-scope.js';
import { canonicalRow, unconfirmedOnly, visible } from '../visibility.js';

// Balances of a principal (NOTES-upstream A.1). At the tip they come from the running totals ingest keeps
// (stx_balances, ft_balances, nft_balances), plus the unconfirmed microblock rows for `unanchored` reads;
// below the tip (`until_block`) they are summed over the principal's indexed event and tx rows up to there.
// Amounts are numeric in SQL and decimal strings here; balances may be negative (pure sender/recipient sums).

interface StxTotals {
  total_sent: string;
  total_received: string;
  total_fees_sent: string;
  total_miner_rewards_received: string;
}

/** Per asset: amounts (fungible) or event counts (non-fungible) sent and received. */
interface AssetTotals {
  asset_identifier: string;
  total_sent: string;
  total_received: string;
}

interface StxLock {
  lock_tx_id: string;
  locked: string;
  lock_height: number;
  burnchain_lock_height: number;
  burnchain_unlock_height: number;
}

/** What unpruned mempool txs would move in and out (transfer amounts, fees). */
interface PendingTotals {
  inbound: string;
  outbound: string;
}

interface VestingRow {
  amount: string;
  block_height: number;
}

export interface AccountBalances {
  stx: StxTotals;
  /** null when nothing is locked at the scope */
  lock: StxLock | null;
  fungible: AssetTotals[];
  nonFungible: AssetTotals[];
  /** null unless asked for */
  pending: PendingTotals | null;
  /** the Stacks 1.0 vesting schedule, by height (empty for principals without one) */
  vesting: VestingRow[];
}

/** Reads every part of a principal's balances at a scope (pending mempool totals when `withPending`). */
export async function getAccountBalances(
  sql: Sql,
  principal: string,
  scope: AccountScope,
  options: { withPending: boolean },
): Promise<AccountBalances> {
  const window = scopeWindow(scope);
  if (window.current && !window.unconfirmed && options.withPending) {
    return currentBalances(sql, principal, scope);
  }
  const [stx, lock, fungible, nonFungible, pending, vesting] = await Promise.all([
    stxTotals(sql, principal, window),
    stxLock(sql, principal, scope),
    assetTotals(sql, principal, window, 'ft'),
    assetTotals(sql, principal, window, 'nft'),
    options.withPending ? pendingTotals(sql, principal) : Promise.resolve(null),
    vestingSchedule(sql, principal),
  ]);
  return { stx, lock, fungible, nonFungible, pending, vesting };
}

/** Rows a window adds on top of the running totals (current) or sums from scratch (historic). */
function windowRows(sql: Sql, alias: string, window: ScopeWindow) {
  return window.current
    ? unconfirmedOnly(sql, alias)
    : visible(sql, alias, { unanchored: false, maxHeight: window.maxHeight });
}

/** STX moved by events and fees paid (by the sender of a non-sponsored tx, the sponsor of a sponsored one). */
function stxMovements(sql: Sql, principal: string, window: ScopeWindow) {
  return sql`
    SELECT e.amount AS sent, 0 AS received, 0 AS fees, 0 AS rewards FROM events e
      WHERE e.sender = ${principal} AND e.kind = ${EventKind.stxAsset} AND ${windowRows(sql, 'e', window)}
    UNION ALL
    SELECT 0, e.amount, 0, 0 FROM events e
      WHERE e.recipient = ${principal} AND e.kind = ${EventKind.stxAsset} AND ${windowRows(sql, 'e', window)}
    UNION ALL
    SELECT 0, 0, t.fee_rate, 0 FROM txs t
      WHERE t.sender_address = ${principal} AND NOT t.sponsored AND ${windowRows(sql, 't', window)}
    UNION ALL
    SELECT 0, 0, t.fee_rate, 0 FROM txs t
      WHERE t.sponsor_address = ${principal} AND t.sponsored AND ${windowRows(sql, 't', window)}`;
}

async function stxTotals(sql: Sql, principal: string, window: ScopeWindow): Promise<StxTotals> {
  const parts = window.current
    ? sql`
      SELECT total_sent, total_received, total_fees_sent, total_miner_rewards_received
      FROM stx_balances WHERE principal = ${principal}
      ${window.unconfirmed ? sql`UNION ALL ${stxMovements(sql, principal, window)}` : sql``}`
    : sql`
      ${stxMovements(sql, principal, window)}
      UNION ALL
      SELECT 0, 0, 0, coinbase_amount + tx_fees_anchored + tx_fees_streamed_confirmed + tx_fees_streamed_produced
      FROM miner_rewards
      WHERE recipient = ${principal} AND canonical AND mature_block_height <= ${window.maxHeight}`;
  const [row] = await sql<StxTotals[]>`
    SELECT coalesce(sum(p.sent), 0)::text AS total_sent, coalesce(sum(p.received), 0)::text AS total_received,
      coalesce(sum(p.fees), 0)::text AS total_fees_sent,
      coalesce(sum(p.rewards), 0)::text AS total_miner_rewards_received
    FROM (${parts}) AS p (sent, received, fees, rewards)`;
  return row;
}

/**
 * Fungible token amounts or non-fungible token event counts, per asset. An asset shows only once an event
 * moved it (Clarity rejects zero amounts, so all-zero totals mean "no event": e.g. after a reorg).
 */
async function assetTotals(
  sql: Sql,
  principal: string,
  window: ScopeWindow,
  family: 'ft' | 'nft',
): Promise<AssetTotals[]> {
  const kind = family === 'ft' ? EventKind.ftAsset : EventKind.nftAsset;
  const unit = family === 'ft' ? sql`e.amount` : sql`1::numeric`;
  const movements = sql`
    SELECT e.asset_identifier, ${unit} AS sent, 0 AS received FROM events e
      WHERE e.sender = ${principal} AND e.kind = ${kind} AND ${windowRows(sql, 'e', window)}
    UNION ALL
    SELECT e.asset_identifier, 0, ${unit} FROM events e
      WHERE e.recipient = ${principal} AND e.kind = ${kind} AND ${windowRows(sql, 'e', window)}`;
  const stored =
    family === 'ft'
      ? sql`SELECT asset_identifier, total_sent, total_received FROM ft_balances WHERE principal = ${principal}`
      : sql`SELECT asset_identifier, sent_count::numeric, received_count::numeric
            FROM nft_balances WHERE principal = ${principal}`;
  const parts = window.current
    ? sql`${stored} ${window.unconfirmed ? sql`UNION ALL ${movements}` : sql``}`
    : movements;
  const rows = await sql<AssetTotals[]>`
    SELECT p.asset_identifier, sum(p.sent)::text AS total_sent, sum(p.received)::text AS total_received
    FROM (${parts}) AS p (asset_identifier, sent, received)
    GROUP BY p.asset_identifier
    HAVING sum(p.sent) <> 0 OR sum(p.received) <> 0`;
  return rows.sort((a, b) => a.asset_identifier.localeCompare(b.asset_identifier));
}

interface LockRow {
  tx_id: string;
  pox_name: string | null;
  contract_id: string | null;
  amount: string;
  unlock_height: number;
  block_height: number;
  lock_burn_height: number | null;
  burn_height: number | null;
  pox_v1_unlock_height: number | null;
  pox_v2_unlock_height: number | null;
  pox_v3_unlock_height: number | null;
  pox_v4_unlock_height: number | null;
}

/** PoX version of the contract that set a lock: `pox` (or unnamed) is 1, `pox-2`..`pox-4` their number. */
function poxVersion(contractId: string | null): number {
  const match = contractId ? /\.pox-(\d+)$/.exec(contractId) : null;
  return match ? Number(match[1]) : 1;
}

/**
 * The STX lock in force at the scope: the principal's latest lock-changing event (an stx_lock event, or a
 * pox-2/3/4 stack-increase / stack-extend / handle-unlock ...), unless its unlock burn height (capped by its
 * PoX version's force-unlock height) is below the burn height of the block at min(H, tip). At the tip the
 * unconfirmed microblock stream counts too, as in the original API.
 */
async function stxLock(sql: Sql, principal: string, scope: AccountScope): Promise<StxLock | null> {
  const atTip = scope.height >= scope.tip;
  const lockVisibility = visible(
    sql,
    'e',
    atTip ? { unanchored: true } : { unanchored: false, maxHeight: scope.height },
  );
  const [row] = await sql<LockRow[]>`
    WITH latest AS (
      SELECT e.tx_id, e.index_block_hash, e.microblock_hash, e.pox_name, e.contract_id, e.amount,
        e.unlock_height, e.block_height
      FROM events e
      WHERE e.locked_address = ${principal} AND (e.kind = ${EventKind.stxLock} OR e.pox_name IS NOT NULL)
        AND ${lockVisibility}
      ORDER BY e.block_height DESC, e.microblock_sequence DESC, e.tx_index DESC, e.event_index DESC
      LIMIT 1
    )
    SELECT l.tx_id, l.pox_name, l.contract_id, l.amount::text AS amount, l.unlock_height, l.block_height,
      t.burn_block_height AS lock_burn_height,
      (SELECT b.burn_block_height FROM blocks b
        WHERE b.canonical AND b.block_height = ${Math.min(scope.height, scope.tip)}) AS burn_height,
      c.pox_v1_unlock_height, c.pox_v2_unlock_height, c.pox_v3_unlock_height, c.pox_v4_unlock_height
    FROM latest l
    CROSS JOIN chain_tip c
    LEFT JOIN txs t ON t.tx_id = l.tx_id AND t.index_block_hash = l.index_block_hash
      AND t.microblock_hash = l.microblock_hash`;
  return lockInForce(row);
}

/** The lock a principal's latest lock-changing event leaves, if still in force (see `stxLock`). */
function lockInForce(row: LockRow | undefined | null): StxLock | null {
  if (!row || row.pox_name === 'handle-unlock' || row.amount === '0') return null;
  const forceUnlock = [
    row.pox_v1_unlock_height,
    row.pox_v2_unlock_height,
    row.pox_v3_unlock_height,
    row.pox_v4_unlock_height,
  ][poxVersion(row.contract_id) - 1];
  const unlock =
    forceUnlock !== null && forceUnlock !== undefined
      ? Math.min(row.unlock_height, forceUnlock)
      : row.unlock_height;
  if (unlock < (row.burn_height ?? 0)) return null;
  return {
    lock_tx_id: row.tx_id,
    locked: row.amount,
    lock_height: row.block_height,
    burnchain_lock_height: row.lock_burn_height ?? 0,
    burnchain_unlock_height: row.unlock_height,
  };
}

async function pendingTotals(sql: Sql, principal: string): Promise<PendingTotals> {
  const [row] = await sql<PendingTotals[]>`
    SELECT
      (SELECT coalesce(sum(token_transfer_amount), 0) FROM mempool_txs
        WHERE NOT pruned AND token_transfer_recipient = ${principal})::text AS inbound,
      ((SELECT coalesce(sum(coalesce(token_transfer_amount, 0) + fee_rate), 0) FROM mempool_txs
        WHERE NOT pruned AND sender_address = ${principal})
      + (SELECT coalesce(sum(fee_rate), 0) FROM mempool_txs
        WHERE NOT pruned AND sponsored AND sponsor_address = ${principal}))::text AS outbound`;
  return row;
}

async function vestingSchedule(sql: Sql, principal: string): Promise<VestingRow[]> {
  return sql<VestingRow[]>`
    SELECT value::text AS amount, block AS block_height FROM token_offering_locked
    WHERE address = ${principal} ORDER BY block`;
}

interface CurrentBalancesRow {
  stx: StxTotals;
  lock: LockRow | null;
  ft: [string, string, string][];
  nft: [string, string, string][];
  pending: PendingTotals;
  vesting: VestingRow[];
}

const byAsset = (a: AssetTotals, b: AssetTotals) => a.asset_identifier.localeCompare(b.asset_identifier);

/**
 * `getAccountBalances` at the tip without the unconfirmed stream (the default request), as one flat
 * statement: the same reads as the general path (running totals, the latest lock-changing event, pending
 * mempool totals, vesting), in one round trip and without composing fragments per call (each composed
 * statement cost ~100 µs of client CPU, and six statements six protocol exchanges, on the hottest
 * account read).
 */
async function currentBalances(sql: Sql, principal: string, scope: AccountScope): Promise<AccountBalances> {
  const [row] = await sql<CurrentBalancesRow[]>`
    SELECT
      (SELECT json_build_object(
          'total_sent', coalesce(max(b.total_sent), 0)::text,
          'total_received', coalesce(max(b.total_received), 0)::text,
          'total_fees_sent', coalesce(max(b.total_fees_sent), 0)::text,
          'total_miner_rewards_received', coalesce(max(b.total_miner_rewards_received), 0)::text)
        FROM stx_balances b WHERE b.principal = ${principal}) AS stx,
      (SELECT row_to_json(l) FROM (
        SELECT e.tx_id, e.pox_name, e.contract_id, e.amount::text AS amount, e.unlock_height, e.block_height,
          (SELECT t.burn_block_height FROM txs t WHERE t.tx_id = e.tx_id
            AND t.index_block_hash = e.index_block_hash AND t.microblock_hash = e.microblock_hash) AS lock_burn_height,
          (SELECT b.burn_block_height FROM blocks b WHERE b.canonical AND b.block_height = ${scope.tip}) AS burn_height,
          c.pox_v1_unlock_height, c.pox_v2_unlock_height, c.pox_v3_unlock_height, c.pox_v4_unlock_height
        FROM events e CROSS JOIN chain_tip c
        WHERE e.locked_address = ${principal} AND (e.kind = ${EventKind.stxLock} OR e.pox_name IS NOT NULL)
          AND ${sql.unsafe(canonicalRow('e'))}
        ORDER BY e.block_height DESC, e.microblock_sequence DESC, e.tx_index DESC, e.event_index DESC
        LIMIT 1) AS l) AS lock,
      (SELECT coalesce(json_agg(json_build_array(f.asset_identifier, f.total_sent::text, f.total_received::text)), '[]')
        FROM ft_balances f
        WHERE f.principal = ${principal} AND (f.total_sent <> 0 OR f.total_received <> 0)) AS ft,
      (SELECT coalesce(json_agg(json_build_array(n.asset_identifier, n.sent_count::text, n.received_count::text)), '[]')
        FROM nft_balances n
        WHERE n.principal = ${principal} AND (n.sent_count <> 0 OR n.received_count <> 0)) AS nft,
      json_build_object(
        'inbound', (SELECT coalesce(sum(m.token_transfer_amount), 0) FROM mempool_txs m
          WHERE NOT m.pruned AND m.token_transfer_recipient = ${principal})::text,
        'outbound', ((SELECT coalesce(sum(coalesce(m.token_transfer_amount, 0) + m.fee_rate), 0) FROM mempool_txs m
          WHERE NOT m.pruned AND m.sender_address = ${principal})
        + (SELECT coalesce(sum(m.fee_rate), 0) FROM mempool_txs m
          WHERE NOT m.pruned AND m.sponsored AND m.sponsor_address = ${principal}))::text) AS pending,
      (SELECT coalesce(json_agg(json_build_object('amount', v.value::text, 'block_height', v.block) ORDER BY v.block), '[]')
        FROM token_offering_locked v WHERE v.address = ${principal}) AS vesting`;
  const assets = (list: [string, string, string][]) =>
    list
      .map(([asset_identifier, total_sent, total_received]) => ({
        asset_identifier,
        total_sent,
        total_received,
      }))
      .sort(byAsset);
  return {
    stx: row.stx,
    lock: lockInForce(row.lock),
    fungible: assets(row.ft),
    nonFungible: assets(row.nft),
    pending: row.pending,
    vesting: row.vesting,
  };
}
