import type { Sql } from '../db.js';
import { anchoredVisibleRow, canonicalRow } from '../visibility.js';

// What the demo (`start`) reads: whether the database is new, a demo chain left unfinished, ids to try.

/** Ids worth trying the API with (printed by `start`): whatever the indexed chain holds. */
export interface IdsToTry {
  tipHeight: number;
  /** burn height of a canonical block */
  burnBlockHeight: number | null;
  /** a recent canonical contract call (else any canonical tx) */
  txId: string | null;
  /** another canonical tx, for the multiple-tx lookup */
  otherTxId: string | null;
  /** the standard principal in most canonical transactions */
  busyAddress: string | null;
  /** a tx of the busy address */
  busyTxId: string | null;
  contractId: string | null;
}

/** Whether nothing was ever indexed: no block and no observer message. */
export async function isEmptyIndex(sql: Sql): Promise<boolean> {
  const [row] = await sql<{ empty: boolean }[]>`
    SELECT NOT EXISTS (SELECT 1 FROM observer_messages) AND NOT EXISTS (SELECT 1 FROM blocks) AS empty`;
  return row.empty;
}

/**
 * A demo chain whose indexing was started and not completed (a start stopped part-way): how many blocks
 * it was to have and the height it reached; null when there is none (never started, or complete).
 */
export async function unfinishedDemoChain(sql: Sql): Promise<{ blocks: number; tipHeight: number } | null> {
  const [row] = await sql<{ blocks: number; tip_height: number }[]>`
    SELECT d.blocks, t.block_height AS tip_height
    FROM demo_chain d CROSS JOIN chain_tip t
    WHERE d.completed_at IS NULL`;
  return row ? { blocks: row.blocks, tipHeight: row.tip_height } : null;
}

/** Ids from the chain, picked below the tip (at 70% of its height). */
export async function idsToTry(sql: Sql): Promise<IdsToTry> {
  const [tip] = await sql<{ block_height: number }[]>`SELECT block_height FROM chain_tip`;
  const height = Math.max(1, Math.floor(tip.block_height * 0.7));
  const [block] = await sql<{ burn_block_height: number }[]>`
    SELECT burn_block_height FROM blocks WHERE canonical AND block_height <= ${height}
    ORDER BY block_height DESC LIMIT 1`;
  const txs = await sql<{ tx_id: string }[]>`
    SELECT tx_id FROM txs
    WHERE ${sql.unsafe(anchoredVisibleRow(''))} AND block_height <= ${height}
    ORDER BY (contract_call_contract_id IS NOT NULL) DESC, block_height DESC, tx_index DESC LIMIT 2`;
  const [busy] = await sql<{ principal: string }[]>`
    SELECT principal FROM principal_stats WHERE principal NOT LIKE '%.%'
    ORDER BY tx_count DESC, principal LIMIT 1`;
  const [busyTx] = busy
    ? await sql<{ tx_id: string }[]>`
        SELECT tx_id FROM principal_txs
        WHERE principal = ${busy.principal} AND ${sql.unsafe(anchoredVisibleRow(''))}
        ORDER BY block_height DESC, tx_index DESC LIMIT 1`
    : [];
  const [contract] = await sql<{ contract_id: string }[]>`
    SELECT contract_id FROM smart_contracts WHERE ${sql.unsafe(canonicalRow(''))}
    ORDER BY block_height, contract_id LIMIT 1`;
  return {
    tipHeight: tip.block_height,
    burnBlockHeight: block?.burn_block_height ?? null,
    txId: txs[0]?.tx_id ?? null,
    otherTxId: txs[1]?.tx_id ?? null,
    busyAddress: busy?.principal ?? null,
    busyTxId: busyTx?.tx_id ?? null,
    contractId: contract?.contract_id ?? null,
  };
}
