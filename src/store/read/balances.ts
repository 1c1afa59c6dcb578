import type { Sql } from '../db.js';
import { EventKind } from '../schema/codes.js';
import { senderPaysRow, sponsorPaysRow } from '../fee-payer.js';
import { statement } from '../statement.js';
import { scopeWindow, type AccountScope } from './account-scope.js';
import { anchoredVisibleRow, canonicalRow, pendingPayerRow, unconfirmedStreamRow } from '../visibility.js';

// Balances of a principal (docs/upstream.md A.1). At the tip they come from the running totals ingest keeps
// (stx_balances, ft_balances, nft_balances), plus the unconfirmed microblock rows for `unanchored` reads;
// below the tip (`until_block`) they are summed over the principal's indexed event and tx rows up to there.
// Amounts are numeric in SQL and decimal strings here; balances may be negative (pure sender/recipient sums).
//
// Three statements, their text built once at module load from the rules (visibility.ts, fee-payer.ts, the
// codes) and run prepared (store/statement.ts): the tip, the unconfirmed stream's additions, a past height.
// Each answers every part in one round trip: six composed statements per read cost six protocol exchanges and
// ~100 µs of client CPU each on the hottest account read.

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
  if (!window.current) {
    const [row] = await balancesAtHeight(sql, principal, window.maxHeight, options.withPending);
    return balancesOf(row);
  }
  if (!window.unconfirmed) {
    const [row] = await balancesAtTip(sql, principal, scope.tip, options.withPending);
    return balancesOf(row);
  }
  const [[row], [stream]] = await Promise.all([
    balancesAtTip(sql, principal, scope.tip, options.withPending),
    unconfirmedAdditions(sql, principal),
  ]);
  return balancesOf(row, stream);
}

/** Statement parameters: $1 the principal, $2 a height, $3 whether to read the pending mempool totals. */
const PRINCIPAL = '$1';
const HEIGHT = '$2';
const WITH_PENDING = '$3::boolean';

/**
 * STX moved by the principal's events, and the fees it paid (fee-payer.ts), in rows the condition on an
 * alias admits: (sent, received, fees, rewards) per row.
 */
function stxMovements(rows: (alias: string) => string): string {
  return `
    SELECT e.amount AS sent, 0 AS received, 0 AS fees, 0 AS rewards FROM events e
      WHERE e.sender = ${PRINCIPAL} AND e.kind = ${EventKind.stxAsset} AND ${rows('e')}
    UNION ALL
    SELECT 0, e.amount, 0, 0 FROM events e
      WHERE e.recipient = ${PRINCIPAL} AND e.kind = ${EventKind.stxAsset} AND ${rows('e')}
    UNION ALL
    SELECT 0, 0, t.fee_rate, 0 FROM txs t WHERE ${senderPaysRow('t', PRINCIPAL)} AND ${rows('t')}
    UNION ALL
    SELECT 0, 0, t.fee_rate, 0 FROM txs t WHERE ${sponsorPaysRow('t', PRINCIPAL)} AND ${rows('t')}`;
}

/** The STX totals object of summed movements `p (sent, received, fees, rewards)`. */
function stxTotalsOf(movements: string): string {
  return `(SELECT json_build_object(
      'total_sent', coalesce(sum(p.sent), 0)::text, 'total_received', coalesce(sum(p.received), 0)::text,
      'total_fees_sent', coalesce(sum(p.fees), 0)::text,
      'total_miner_rewards_received', coalesce(sum(p.rewards), 0)::text)
    FROM (${movements}) AS p (sent, received, fees, rewards))`;
}

/**
 * Fungible token amounts or non-fungible token event counts per asset, summed over the rows the condition
 * admits, as a json array of [asset, sent, received]. An asset shows only once an event moved it (Clarity
 * rejects zero amounts, so all-zero totals mean "no event": e.g. after a reorg).
 */
function assetMovements(family: 'ft' | 'nft', rows: (alias: string) => string): string {
  const kind = family === 'ft' ? EventKind.ftAsset : EventKind.nftAsset;
  const unit = family === 'ft' ? 'e.amount' : '1::numeric';
  return `(SELECT coalesce(json_agg(json_build_array(p.asset_identifier, p.sent::text, p.received::text)), '[]')
    FROM (
      SELECT m.asset_identifier, sum(m.sent) AS sent, sum(m.received) AS received FROM (
        SELECT e.asset_identifier, ${unit} AS sent, 0 AS received FROM events e
          WHERE e.sender = ${PRINCIPAL} AND e.kind = ${kind} AND ${rows('e')}
        UNION ALL
        SELECT e.asset_identifier, 0, ${unit} FROM events e
          WHERE e.recipient = ${PRINCIPAL} AND e.kind = ${kind} AND ${rows('e')}
      ) AS m (asset_identifier, sent, received)
      GROUP BY m.asset_identifier
      HAVING sum(m.sent) <> 0 OR sum(m.received) <> 0) AS p)`;
}

/**
 * The principal's latest lock-changing event (an stx_lock event, or a pox-2/3/4 stack-increase /
 * stack-extend / handle-unlock ...) among the rows the condition admits, with the burn height of the block
 * at `burnAt` and the force-unlock heights `lockInForce` judges it by.
 */
function latestLock(rows: (alias: string) => string, burnAt: string): string {
  return `(SELECT row_to_json(l) FROM (
      SELECT e.tx_id, e.pox_name, e.contract_id, e.amount::text AS amount, e.unlock_height, e.block_height,
        (SELECT t.burn_block_height FROM txs t WHERE t.tx_id = e.tx_id
          AND t.index_block_hash = e.index_block_hash AND t.microblock_hash = e.microblock_hash) AS lock_burn_height,
        (SELECT b.burn_block_height FROM blocks b WHERE b.canonical AND b.block_height = ${burnAt}) AS burn_height,
        c.pox_v1_unlock_height, c.pox_v2_unlock_height, c.pox_v3_unlock_height, c.pox_v4_unlock_height
      FROM events e CROSS JOIN chain_tip c
      WHERE e.locked_address = ${PRINCIPAL} AND (e.kind = ${EventKind.stxLock} OR e.pox_name IS NOT NULL)
        AND ${rows('e')}
      ORDER BY e.block_height DESC, e.microblock_sequence DESC, e.tx_index DESC, e.event_index DESC
      LIMIT 1) AS l)`;
}

/**
 * What unpruned mempool txs would move in and out, when asked for: upstream's rule, which charges the sender
 * the amount and fee of each of its txs, sponsored or not, and the sponsor the fee of the txs it sponsors.
 * The payer's pending txs are one range of migration 038's indexes (`pendingPayerRow`), whatever plan runs: the
 * generic plan once summed through the busiest sender's every mempool entry (43 ms of a v1 STX balance on the
 * 1M-tx chain; F-read-busiest-nonces-unstable).
 */
const PENDING = `CASE WHEN ${WITH_PENDING} THEN json_build_object(
    'inbound', (SELECT coalesce(sum(m.token_transfer_amount), 0) FROM mempool_txs m
      WHERE NOT m.pruned AND m.token_transfer_recipient = ${PRINCIPAL})::text,
    'outbound', ((SELECT coalesce(sum(coalesce(m.token_transfer_amount, 0) + m.fee_rate), 0) FROM mempool_txs m
      WHERE ${pendingPayerRow('m')} AND m.sender_address = ${PRINCIPAL})
    + (SELECT coalesce(sum(m.fee_rate), 0) FROM mempool_txs m
      WHERE ${pendingPayerRow('m')} AND ${sponsorPaysRow('m', PRINCIPAL)}))::text) END`;

const VESTING = `(SELECT coalesce(json_agg(json_build_object('amount', v.value::text, 'block_height', v.block)
    ORDER BY v.block), '[]')
  FROM token_offering_locked v WHERE v.address = ${PRINCIPAL})`;

interface BalancesRow {
  stx: StxTotals;
  lock: LockRow | null;
  ft: [string, string, string][];
  nft: [string, string, string][];
  pending: PendingTotals | null;
  vesting: VestingRow[];
}

/**
 * At the tip ($2 the tip height): the running totals, the latest lock among canonical rows (the unconfirmed
 * microblock stream counts too, as in the original API), pending and vesting.
 */
const balancesAtTip = statement<BalancesRow, [principal: string, tip: number, withPending: boolean]>(`
  SELECT
    (SELECT json_build_object(
        'total_sent', coalesce(max(b.total_sent), 0)::text,
        'total_received', coalesce(max(b.total_received), 0)::text,
        'total_fees_sent', coalesce(max(b.total_fees_sent), 0)::text,
        'total_miner_rewards_received', coalesce(max(b.total_miner_rewards_received), 0)::text)
      FROM stx_balances b WHERE b.principal = ${PRINCIPAL}) AS stx,
    ${latestLock(canonicalRow, HEIGHT)} AS lock,
    (SELECT coalesce(json_agg(json_build_array(f.asset_identifier, f.total_sent::text, f.total_received::text)), '[]')
      FROM ft_balances f
      WHERE f.principal = ${PRINCIPAL} AND (f.total_sent <> 0 OR f.total_received <> 0)) AS ft,
    (SELECT coalesce(json_agg(json_build_array(n.asset_identifier, n.sent_count::text, n.received_count::text)), '[]')
      FROM nft_balances n
      WHERE n.principal = ${PRINCIPAL} AND (n.sent_count <> 0 OR n.received_count <> 0)) AS nft,
    ${PENDING} AS pending,
    ${VESTING} AS vesting`);

interface StreamRow {
  stx: StxTotals;
  ft: [string, string, string][];
  nft: [string, string, string][];
}

/** What the unconfirmed microblock stream on the tip adds to the running totals (an `unanchored` read). */
const unconfirmedAdditions = statement<StreamRow, [principal: string]>(`
  SELECT ${stxTotalsOf(stxMovements(unconfirmedStreamRow))} AS stx,
    ${assetMovements('ft', unconfirmedStreamRow)} AS ft,
    ${assetMovements('nft', unconfirmedStreamRow)} AS nft`);

/** Anchored rows of the canonical chain mined at or below the height $2. */
const rowsAtHeight = (alias: string) => `${anchoredVisibleRow(alias)} AND ${alias}.block_height <= ${HEIGHT}`;

/** Below the tip ($2 the height): everything summed over the rows up to there, matured rewards included. */
const balancesAtHeight = statement<BalancesRow, [principal: string, height: number, withPending: boolean]>(`
  SELECT
    ${stxTotalsOf(`${stxMovements(rowsAtHeight)}
      UNION ALL
      SELECT 0, 0, 0, r.coinbase_amount + r.tx_fees_anchored + r.tx_fees_streamed_confirmed + r.tx_fees_streamed_produced
      FROM miner_rewards r
      WHERE r.recipient = ${PRINCIPAL} AND r.canonical AND r.mature_block_height <= ${HEIGHT}`)} AS stx,
    ${latestLock(rowsAtHeight, HEIGHT)} AS lock,
    ${assetMovements('ft', rowsAtHeight)} AS ft,
    ${assetMovements('nft', rowsAtHeight)} AS nft,
    ${PENDING} AS pending,
    ${VESTING} AS vesting`);

const byAsset = (a: AssetTotals, b: AssetTotals) => a.asset_identifier.localeCompare(b.asset_identifier);

/** The balances a statement read, with the unconfirmed stream's additions summed in when given. */
function balancesOf(row: BalancesRow, stream?: StreamRow): AccountBalances {
  const assets = (stored: [string, string, string][], added: [string, string, string][] = []) => {
    const totals = new Map<string, [bigint, bigint]>();
    for (const [asset, sent, received] of [...stored, ...added]) {
      const [s, r] = totals.get(asset) ?? [0n, 0n];
      totals.set(asset, [s + BigInt(sent), r + BigInt(received)]);
    }
    return [...totals]
      .filter(([, [sent, received]]) => sent !== 0n || received !== 0n)
      .map(([asset_identifier, [sent, received]]) => ({
        asset_identifier,
        total_sent: sent.toString(),
        total_received: received.toString(),
      }))
      .sort(byAsset);
  };
  const sum = (a: string, b: string | undefined) =>
    b === undefined ? a : (BigInt(a) + BigInt(b)).toString();
  return {
    stx: {
      total_sent: sum(row.stx.total_sent, stream?.stx.total_sent),
      total_received: sum(row.stx.total_received, stream?.stx.total_received),
      total_fees_sent: sum(row.stx.total_fees_sent, stream?.stx.total_fees_sent),
      total_miner_rewards_received: sum(
        row.stx.total_miner_rewards_received,
        stream?.stx.total_miner_rewards_received,
      ),
    },
    lock: lockInForce(row.lock),
    fungible: assets(row.ft, stream?.ft),
    nonFungible: assets(row.nft, stream?.nft),
    pending: row.pending,
    vesting: row.vesting,
  };
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
