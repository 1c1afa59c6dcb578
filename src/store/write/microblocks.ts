import type { TransactionSql } from '../db.js';
import { columnSpec, microblockColumns } from '../schema/tables.js';
import { bulkInsert } from './bulk.js';
import type { MicroblockRow } from '../schema/rows.js';

// Unconfirmed microblock rows (txs, events, principal index, contracts) carry index_block_hash = '' until
// an anchored block confirms their microblock; the block's own payload then brings the confirmed copies.

const STAGED_TABLES = ['txs', 'events', 'principal_txs', 'smart_contracts'] as const;

const microblockSpec = columnSpec(microblockColumns);

/** A block's parent microblock when it confirms none (32 zero bytes). */
const NO_MICROBLOCK = `0x${'00'.repeat(32)}`;

export function insertMicroblocks(sql: TransactionSql, rows: MicroblockRow[]): Promise<unknown> {
  return bulkInsert(sql, 'microblocks', microblockSpec, rows, 'ON CONFLICT (microblock_hash) DO NOTHING');
}

export interface StoredMicroblock {
  microblock_hash: string;
  microblock_sequence: number;
  microblock_parent_hash: string;
  parent_index_block_hash: string;
  index_block_hash: string;
  microblock_canonical: boolean;
}

export async function getMicroblock(
  sql: TransactionSql,
  hash: string,
): Promise<StoredMicroblock | undefined> {
  const [row] = await sql<StoredMicroblock[]>`
    SELECT microblock_hash, microblock_sequence, microblock_parent_hash, parent_index_block_hash,
      index_block_hash, microblock_canonical
    FROM microblocks WHERE microblock_hash = ${hash}`;
  return row;
}

/** The microblocks a block confirms: its parent microblock and that one's ancestors in the same stream. */
export async function microblockChain(
  sql: TransactionSql,
  parentIndexBlockHash: string,
  tipMicroblockHash: string,
): Promise<string[]> {
  const rows = await sql<{ microblock_hash: string }[]>`
    WITH RECURSIVE chain AS (
      SELECT microblock_hash, microblock_parent_hash, microblock_sequence FROM microblocks
      WHERE microblock_hash = ${tipMicroblockHash} AND parent_index_block_hash = ${parentIndexBlockHash}
      UNION ALL
      SELECT m.microblock_hash, m.microblock_parent_hash, m.microblock_sequence
      FROM microblocks m JOIN chain c ON m.microblock_hash = c.microblock_parent_hash
      WHERE m.parent_index_block_hash = ${parentIndexBlockHash} AND c.microblock_sequence > 0
    )
    SELECT microblock_hash FROM chain`;
  return rows.map((r) => r.microblock_hash);
}

/** Records that `indexBlockHash` confirmed these microblocks. */
export function markMicroblocksConfirmed(
  sql: TransactionSql,
  hashes: string[],
  block: { index_block_hash: string; block_height: number },
): Promise<unknown> {
  if (hashes.length === 0) return Promise.resolve();
  return sql`
    UPDATE microblocks SET index_block_hash = ${block.index_block_hash}, block_height = ${block.block_height},
      microblock_canonical = true
    WHERE microblock_hash = ANY(${hashes})`.execute();
}

/**
 * A reorg made these blocks canonical: the microblocks each accepted (its parent's stream up to its parent
 * microblock) name it again, on the canonical stream, as upstream re-runs a restored block's confirmation
 * (a sibling that confirmed the same microblocks earlier had them). In chain order, so a later block wins.
 */
export async function markMicroblocksConfirmedByRestored(
  sql: TransactionSql,
  restored: string[],
): Promise<void> {
  if (restored.length === 0) return;
  const blocks = await sql<
    {
      index_block_hash: string;
      block_height: number;
      parent_index_block_hash: string;
      parent_microblock_hash: string;
    }[]
  >`
    SELECT index_block_hash, block_height, parent_index_block_hash, parent_microblock_hash FROM blocks
    WHERE index_block_hash = ANY(${restored}) AND parent_microblock_hash <> ${NO_MICROBLOCK}
    ORDER BY block_height`;
  for (const block of blocks) {
    const accepted = await microblockChain(sql, block.parent_index_block_hash, block.parent_microblock_hash);
    await markMicroblocksConfirmed(sql, accepted, block);
  }
}

/**
 * Records the block that orphaned these microblocks (it confirmed another part of their stream): upstream keeps
 * that block on an orphaned microblock as on a confirmed one (its hash, and whether it is canonical, show in
 * `GET /extended/v1/microblock/{hash}`). Their rows stay staged (index_block_hash ''), orphaned.
 */
export function markMicroblocksOrphanedBy(
  sql: TransactionSql,
  hashes: string[],
  block: { index_block_hash: string },
): Promise<unknown> {
  if (hashes.length === 0) return Promise.resolve();
  return sql`
    UPDATE microblocks SET index_block_hash = ${block.index_block_hash}
    WHERE microblock_hash = ANY(${hashes})`.execute();
}

/** Unconfirmed microblocks still canonical (the stream on the current tip), with their sequence. */
export async function unconfirmedMicroblocks(sql: TransactionSql): Promise<StoredMicroblock[]> {
  return sql<StoredMicroblock[]>`
    SELECT microblock_hash, microblock_sequence, microblock_parent_hash, parent_index_block_hash,
      index_block_hash, microblock_canonical
    FROM microblocks WHERE index_block_hash = '' AND microblock_canonical
    ORDER BY microblock_sequence`;
}

/** The tx index each staged (streamed, not yet confirmed) tx of these microblocks was streamed with. */
export async function stagedTxIndexes(
  sql: TransactionSql,
  microblockHashes: string[],
): Promise<{ tx_id: string; microblock_hash: string; tx_index: number }[]> {
  if (microblockHashes.length === 0) return [];
  return sql<{ tx_id: string; microblock_hash: string; tx_index: number }[]>`
    SELECT tx_id, microblock_hash, tx_index FROM txs
    WHERE index_block_hash = '' AND microblock_hash = ANY(${microblockHashes})`;
}

/** Removes the staged rows of microblocks now confirmed by a block (the block holds their final rows). */
export function dropStagedRows(sql: TransactionSql, hashes: string[]): Promise<unknown> {
  if (hashes.length === 0) return Promise.resolve();
  return Promise.all(
    STAGED_TABLES.map((table) =>
      sql`DELETE FROM ${sql(table)} WHERE index_block_hash = '' AND microblock_hash = ANY(${hashes})`.execute(),
    ),
  );
}

/** Orphans unconfirmed microblocks; returns the ids of their txs, to go back to the mempool. */
export async function orphanMicroblocks(sql: TransactionSql, hashes: string[]): Promise<string[]> {
  if (hashes.length === 0) return [];
  await sql`UPDATE microblocks SET microblock_canonical = false WHERE microblock_hash = ANY(${hashes})`;
  for (const table of STAGED_TABLES) {
    await sql`
      UPDATE ${sql(table)} SET microblock_canonical = false
      WHERE index_block_hash = '' AND microblock_hash = ANY(${hashes})`;
  }
  const rows = await sql<{ tx_id: string }[]>`
    SELECT tx_id FROM txs WHERE index_block_hash = '' AND microblock_hash = ANY(${hashes})`;
  return rows.map((r) => r.tx_id);
}
