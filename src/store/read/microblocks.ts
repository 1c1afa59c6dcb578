import type { Sql } from '../db.js';
import { statement } from '../statement.js';
import { canonicalRow, unconfirmedRow } from '../visibility.js';

/** A microblock as `GET /extended/v1/microblock/{hash}` shows it. */
export interface MicroblockRecord {
  /** the block that confirmed (or orphaned) it is canonical; true before any block did */
  canonical: boolean;
  microblock_canonical: boolean;
  microblock_hash: string;
  microblock_sequence: number;
  microblock_parent_hash: string;
  block_height: number;
  parent_block_height: number;
  /** '' when the parent block is not indexed */
  parent_block_hash: string;
  parent_burn_block_hash: string;
  parent_burn_block_time: number;
  parent_burn_block_height: number;
  /** the hash of the block that confirmed it (or orphaned it); '' before any block did */
  block_hash: string;
  /** the ids of its canonical txs, the last first */
  txs: string[];
}

// The microblock row keeps its stream's parent and, once a block confirmed it (or orphaned it, confirming
// another part of the stream), that block (migration 001); the rest comes from those two blocks. Upstream
// keeps the same on its row: the parent's height and hash when the microblock is stored, that block's hash
// and canonical flag once there is one (and the flag follows the block through reorgs). Its txs are the
// canonical rows of the microblock, staged or confirmed (upstream lists the same: `canonical AND
// microblock_canonical`, whatever the block), by tx index, the last first. `m.burn_block_*` is the burn block
// of the stream's parent (the one `/new_microblocks` names, or a confirming block's `parent_burn_block_*`:
// ingest/decode-block.ts).

/**
 * A parent burn block column: the microblock's, else (a microblock first seen in a block message without its
 * parent's burn block: ingest/decode-block.ts) the parent block's.
 */
const parentBurn = (column: 'burn_block_hash' | 'burn_block_time' | 'burn_block_height') =>
  `CASE WHEN m.burn_block_hash = '' AND p.index_block_hash IS NOT NULL THEN p.${column} ELSE m.${column} END`;

const MICROBLOCK = statement<MicroblockRecord, [hash: string]>(`
  SELECT
    COALESCE(c.canonical, true) AS canonical,
    m.microblock_canonical, m.microblock_hash, m.microblock_sequence, m.microblock_parent_hash, m.block_height,
    COALESCE(p.block_height, m.block_height - 1) AS parent_block_height,
    COALESCE(p.block_hash, '') AS parent_block_hash,
    ${parentBurn('burn_block_hash')} AS parent_burn_block_hash,
    ${parentBurn('burn_block_time')} AS parent_burn_block_time,
    ${parentBurn('burn_block_height')} AS parent_burn_block_height,
    COALESCE(c.block_hash, '') AS block_hash,
    ARRAY(
      SELECT t.tx_id FROM txs t
      -- "<> ''" lets the planner use the partial index txs_microblock_idx
      WHERE t.microblock_hash = m.microblock_hash AND t.microblock_hash <> '' AND ${canonicalRow('t')}
      ORDER BY t.tx_index DESC) AS txs
  FROM microblocks m
  LEFT JOIN blocks p ON p.index_block_hash = m.parent_index_block_hash
  LEFT JOIN blocks c ON c.index_block_hash = m.index_block_hash AND NOT (${unconfirmedRow('m')})
  WHERE m.microblock_hash = $1::text`);

/** A microblock by its hash (lower case, with its 0x). */
export async function findMicroblock(sql: Sql, hash: string): Promise<MicroblockRecord | undefined> {
  const [row] = await MICROBLOCK(sql, hash);
  return row;
}
