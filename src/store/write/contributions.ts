import type { TransactionSql } from '../db.js';
import { EventKind } from './rows.js';

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
export async function releaseOrdinals(sql: TransactionSql, indexBlockHashes: string[]): Promise<void> {
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
