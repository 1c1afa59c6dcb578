import type { TransactionSql } from '../db.js';
import { columnArrays, PREPARED, type ColumnSpec } from './bulk.js';
import { type ChainRows, type MinerRewardRow } from '../schema/rows.js';
import { EventKind } from '../schema/codes.js';

// What a set of anchored blocks adds to the running per-principal state: STX, FT and NFT totals and the
// principal transaction ordinals. Applied with +1 when blocks become canonical and -1 when a reorg orphans
// them; orphaned blocks are always the newest ones, so the ordinals they free are the tail of each list.

/**
 * Adds (sign 1) or removes (sign -1) the balance contributions of the given blocks. The three statements
 * are sent at once (see `sendAll`).
 */
export function applyBalanceContributions(
  sql: TransactionSql,
  indexBlockHashes: string[],
  sign: 1 | -1,
): Promise<unknown> {
  if (indexBlockHashes.length === 0) return Promise.resolve();
  const stx = sql`
    WITH parts (principal, sent, received, fees, rewards) AS (
      SELECT sender, amount, 0, 0, 0 FROM events
        WHERE index_block_hash = ANY(${indexBlockHashes}) AND kind = ${EventKind.stxAsset} AND sender IS NOT NULL
      UNION ALL
      SELECT recipient, 0, amount, 0, 0 FROM events
        WHERE index_block_hash = ANY(${indexBlockHashes}) AND kind = ${EventKind.stxAsset} AND recipient IS NOT NULL
      UNION ALL
      SELECT CASE WHEN sponsored THEN sponsor_address ELSE sender_address END, 0, 0, fee_rate, 0 FROM txs
        WHERE index_block_hash = ANY(${indexBlockHashes})
      UNION ALL
      SELECT recipient, 0, 0, 0,
          coinbase_amount + tx_fees_anchored + tx_fees_streamed_confirmed + tx_fees_streamed_produced
        FROM miner_rewards WHERE index_block_hash = ANY(${indexBlockHashes})
    )
    INSERT INTO stx_balances AS b (principal, total_sent, total_received, total_fees_sent, total_miner_rewards_received)
    SELECT principal, ${sign} * sum(sent), ${sign} * sum(received), ${sign} * sum(fees), ${sign} * sum(rewards)
    FROM parts GROUP BY principal
    ON CONFLICT (principal) DO UPDATE SET
      total_sent = b.total_sent + excluded.total_sent,
      total_received = b.total_received + excluded.total_received,
      total_fees_sent = b.total_fees_sent + excluded.total_fees_sent,
      total_miner_rewards_received = b.total_miner_rewards_received + excluded.total_miner_rewards_received`.execute();

  const ft = sql`
    WITH parts (principal, asset_identifier, sent, received) AS (
      SELECT sender, asset_identifier, amount, 0 FROM events
        WHERE index_block_hash = ANY(${indexBlockHashes}) AND kind = ${EventKind.ftAsset} AND sender IS NOT NULL
      UNION ALL
      SELECT recipient, asset_identifier, 0, amount FROM events
        WHERE index_block_hash = ANY(${indexBlockHashes}) AND kind = ${EventKind.ftAsset} AND recipient IS NOT NULL
    )
    INSERT INTO ft_balances AS b (principal, asset_identifier, total_sent, total_received)
    SELECT principal, asset_identifier, ${sign} * sum(sent), ${sign} * sum(received)
    FROM parts GROUP BY principal, asset_identifier
    ON CONFLICT (principal, asset_identifier) DO UPDATE SET
      total_sent = b.total_sent + excluded.total_sent,
      total_received = b.total_received + excluded.total_received`.execute();

  const nft = sql`
    WITH parts (principal, asset_identifier, sent, received) AS (
      SELECT sender, asset_identifier, 1, 0 FROM events
        WHERE index_block_hash = ANY(${indexBlockHashes}) AND kind = ${EventKind.nftAsset} AND sender IS NOT NULL
      UNION ALL
      SELECT recipient, asset_identifier, 0, 1 FROM events
        WHERE index_block_hash = ANY(${indexBlockHashes}) AND kind = ${EventKind.nftAsset} AND recipient IS NOT NULL
    )
    INSERT INTO nft_balances AS b (principal, asset_identifier, sent_count, received_count)
    SELECT principal, asset_identifier, ${sign} * sum(sent), ${sign} * sum(received)
    FROM parts GROUP BY principal, asset_identifier
    ON CONFLICT (principal, asset_identifier) DO UPDATE SET
      sent_count = b.sent_count + excluded.sent_count,
      received_count = b.received_count + excluded.received_count`.execute();
  return Promise.all([stx, ft, nft]);
}

interface StxContribution {
  principal: string;
  sent: bigint;
  received: bigint;
  fees: bigint;
  rewards: bigint;
}

interface AssetContribution {
  principal: string;
  asset_identifier: string;
  sent: bigint;
  received: bigint;
}

const stxColumns: ColumnSpec<StxContribution> = [
  ['principal', 'text'],
  ['sent', 'numeric'],
  ['received', 'numeric'],
  ['fees', 'numeric'],
  ['rewards', 'numeric'],
];
const ftColumns: ColumnSpec<AssetContribution> = [
  ['principal', 'text'],
  ['asset_identifier', 'text'],
  ['sent', 'numeric'],
  ['received', 'numeric'],
];
const nftColumns: ColumnSpec<AssetContribution> = [
  ['principal', 'text'],
  ['asset_identifier', 'text'],
  ['sent', 'int8'],
  ['received', 'int8'],
];

const INTEGER = /^[0-9]+$/;

/**
 * What `applyBalanceContributions(sql, [block], 1)` adds, summed here from the rows of a block being
 * inserted in the same transaction (all of them: see `insertChainRows`'s `fresh`) instead of read back from
 * `events`, `txs` and `miner_rewards`: one upsert per table from arrays. Returns null when a value is not
 * what those statements expect (a missing principal or amount, a non-integer amount): the caller then runs
 * them, so such a block behaves exactly as before.
 */
export function addRowContributions(
  sql: TransactionSql,
  rows: ChainRows,
  rewards: readonly MinerRewardRow[],
): Promise<unknown> | null {
  const stx = new Map<string, StxContribution>();
  const ft = new Map<string, AssetContribution>();
  const nft = new Map<string, AssetContribution>();
  const stxOf = (principal: string) => {
    let c = stx.get(principal);
    if (!c) stx.set(principal, (c = { principal, sent: 0n, received: 0n, fees: 0n, rewards: 0n }));
    return c;
  };
  const assetOf = (map: Map<string, AssetContribution>, principal: string, asset: string) => {
    const key = `${principal}\n${asset}`;
    let c = map.get(key);
    if (!c) map.set(key, (c = { principal, asset_identifier: asset, sent: 0n, received: 0n }));
    return c;
  };
  const amount = (value: string | null) => (value !== null && INTEGER.test(value) ? BigInt(value) : null);

  for (const e of rows.events) {
    if (e.kind === EventKind.stxAsset) {
      if (e.sender === null && e.recipient === null) continue;
      const value = amount(e.amount);
      if (value === null) return null;
      if (e.sender !== null) stxOf(e.sender).sent += value;
      if (e.recipient !== null) stxOf(e.recipient).received += value;
    } else if (e.kind === EventKind.ftAsset || e.kind === EventKind.nftAsset) {
      if (e.sender === null && e.recipient === null) continue;
      if (e.asset_identifier === null) return null;
      const isFt = e.kind === EventKind.ftAsset;
      const value = isFt ? amount(e.amount) : 1n;
      if (value === null) return null;
      const map = isFt ? ft : nft;
      if (e.sender !== null) assetOf(map, e.sender, e.asset_identifier).sent += value;
      if (e.recipient !== null) assetOf(map, e.recipient, e.asset_identifier).received += value;
    }
  }
  for (const t of rows.txs) {
    const payer = t.sponsored ? t.sponsor_address : t.sender_address;
    const fee = amount(t.fee_rate);
    if (payer === null || fee === null) return null;
    stxOf(payer).fees += fee;
  }
  for (const r of rewards) {
    const parts = [
      r.coinbase_amount,
      r.tx_fees_anchored,
      r.tx_fees_streamed_confirmed,
      r.tx_fees_streamed_produced,
    ];
    let total = 0n;
    for (const part of parts) {
      const value = amount(part);
      if (value === null) return null;
      total += value;
    }
    stxOf(r.recipient).rewards += total;
  }

  const statements: Promise<unknown>[] = [];
  if (stx.size > 0) {
    statements.push(
      sql
        .unsafe(
          `INSERT INTO stx_balances AS b (principal, total_sent, total_received, total_fees_sent,
             total_miner_rewards_received)
           SELECT * FROM unnest($1::text[], $2::numeric[], $3::numeric[], $4::numeric[], $5::numeric[])
           ON CONFLICT (principal) DO UPDATE SET
             total_sent = b.total_sent + excluded.total_sent,
             total_received = b.total_received + excluded.total_received,
             total_fees_sent = b.total_fees_sent + excluded.total_fees_sent,
             total_miner_rewards_received = b.total_miner_rewards_received + excluded.total_miner_rewards_received`,
          columnArrays(sql, stxColumns, [...stx.values()]),
          PREPARED,
        )
        .execute(),
    );
  }
  if (ft.size > 0) {
    statements.push(
      sql
        .unsafe(
          `INSERT INTO ft_balances AS b (principal, asset_identifier, total_sent, total_received)
           SELECT * FROM unnest($1::text[], $2::text[], $3::numeric[], $4::numeric[])
           ON CONFLICT (principal, asset_identifier) DO UPDATE SET
             total_sent = b.total_sent + excluded.total_sent,
             total_received = b.total_received + excluded.total_received`,
          columnArrays(sql, ftColumns, [...ft.values()]),
          PREPARED,
        )
        .execute(),
    );
  }
  if (nft.size > 0) {
    statements.push(
      sql
        .unsafe(
          `INSERT INTO nft_balances AS b (principal, asset_identifier, sent_count, received_count)
           SELECT * FROM unnest($1::text[], $2::text[], $3::int8[], $4::int8[])
           ON CONFLICT (principal, asset_identifier) DO UPDATE SET
             sent_count = b.sent_count + excluded.sent_count,
             received_count = b.received_count + excluded.received_count`,
          columnArrays(sql, nftColumns, [...nft.values()]),
          PREPARED,
        )
        .execute(),
    );
  }
  return Promise.all(statements);
}

/**
 * Numbers the principal index rows of newly canonical blocks after each principal's existing rows, in chain
 * order (height, microblock sequence, tx index), and raises the principals' tx counts.
 */
export async function assignOrdinals(sql: TransactionSql, indexBlockHashes: string[]): Promise<void> {
  if (indexBlockHashes.length === 0) return;
  // Two statements, each joining tables by index: numbering after the current count, then raising it.
  // (One statement joining the new rows with the RETURNING of the count upsert planned as a nested loop
  // over two CTEs: quadratic in the rows of the blocks.)
  await sql`
    WITH ranked AS (
      SELECT principal, tx_id, index_block_hash, microblock_hash,
        row_number() OVER (PARTITION BY principal ORDER BY block_height, microblock_sequence, tx_index) AS rn
      FROM principal_txs
      WHERE index_block_hash = ANY(${indexBlockHashes}) AND microblock_canonical
    )
    UPDATE principal_txs AS p SET ordinal = coalesce(s.tx_count, 0) + r.rn
    FROM ranked r LEFT JOIN principal_stats s ON s.principal = r.principal
    WHERE p.principal = r.principal AND p.tx_id = r.tx_id
      AND p.index_block_hash = r.index_block_hash AND p.microblock_hash = r.microblock_hash`;
  await sql`
    INSERT INTO principal_stats AS s (principal, tx_count)
    SELECT principal, count(*) FROM principal_txs
    WHERE index_block_hash = ANY(${indexBlockHashes}) AND microblock_canonical
    GROUP BY principal
    ON CONFLICT (principal) DO UPDATE SET tx_count = s.tx_count + excluded.tx_count`;
}

/** Clears the ordinals of orphaned blocks' rows and lowers the principals' tx counts. */
async function releaseOrdinals(sql: TransactionSql, indexBlockHashes: string[]): Promise<void> {
  if (indexBlockHashes.length === 0) return;
  await sql`
    WITH released AS (
      UPDATE principal_txs SET ordinal = NULL
      WHERE index_block_hash = ANY(${indexBlockHashes}) AND ordinal IS NOT NULL
      RETURNING principal
    )
    UPDATE principal_stats AS s SET tx_count = s.tx_count - r.n
    FROM (SELECT principal, count(*) AS n FROM released GROUP BY principal) AS r
    WHERE s.principal = r.principal`;
}

/** Everything a block adds once it is canonical. */
export async function addBlockContributions(sql: TransactionSql, indexBlockHashes: string[]): Promise<void> {
  await applyBalanceContributions(sql, indexBlockHashes, 1);
  await assignOrdinals(sql, indexBlockHashes);
}

/** Undoes `addBlockContributions` for blocks a reorg orphans. */
export async function removeBlockContributions(
  sql: TransactionSql,
  indexBlockHashes: string[],
): Promise<void> {
  await applyBalanceContributions(sql, indexBlockHashes, -1);
  await releaseOrdinals(sql, indexBlockHashes);
}
