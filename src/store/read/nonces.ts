import type { Sql } from '../db.js';
import { statement } from '../statement.js';
import { canonicalRow, pendingPayerRow } from '../visibility.js';

// The nonces a wallet asks for before it signs (docs/upstream.md C.11). Each highest nonce is one backward
// step of a (principal, nonce) index: as sender by the tx nonce, as sponsor by the sponsor nonce, mined
// (canonical, an unconfirmed microblock stream included) or pending.

export interface Nonces {
  /** the highest nonce of its mined txs as sender or sponsor; null when it has none */
  lastExecuted: number | null;
  /** the same over its pending mempool txs */
  lastMempool: number | null;
  /** one more than the higher of the two; 0 when both are null */
  possibleNext: number;
  /** between the two, when the mempool's is more than one above: the nonces pending, highest first */
  detectedMempool: number[];
  /** and the others, highest first */
  detectedMissing: number[];
}

/**
 * The most missing nonces listed: the gap between the last mined and the last pending nonce is the node's
 * to bound (it refuses a tx chained too far ahead), but a list built from it should not grow with a number
 * a sender chose. The highest ones are listed.
 */
const MAX_MISSING_NONCES = 10_000;

interface NonceRow {
  executed: string | null;
  mempool: string | null;
  /** the pending nonces (as sender, or as sponsor by sponsor nonce) strictly between the two */
  between: string[] | null;
}

/**
 * The pending reads ("this sender or sponsor, not pruned": `pendingPayerRow`) are ranges of the payer indexes of
 * migration 038, keyed (payer, pruned, nonce), whatever plan runs. With only partial indexes on `NOT pruned`,
 * whose pages the pruned entries had swelled, PostgreSQL's generic plan of this prepared statement (used after
 * five calls) walked the busiest sender's every mempool entry, 69,904 pruned ones, four times: 157 ms a read on
 * the 1M-tx chain against 0.8 ms now, 67 buffers (F-read-busiest-nonces-unstable).
 */
const nonces = statement<NonceRow, [principal: string]>(`
  WITH last AS (
    SELECT greatest(
        (SELECT t.nonce FROM txs t WHERE t.sender_address = $1 AND ${canonicalRow('t')}
          ORDER BY t.nonce DESC LIMIT 1),
        (SELECT t.sponsor_nonce FROM txs t WHERE t.sponsored AND t.sponsor_address = $1 AND ${canonicalRow('t')}
          ORDER BY t.sponsor_nonce DESC LIMIT 1)) AS executed,
      greatest(
        (SELECT m.nonce FROM mempool_txs m WHERE ${pendingPayerRow('m')} AND m.sender_address = $1
          ORDER BY m.nonce DESC LIMIT 1),
        (SELECT m.sponsor_nonce FROM mempool_txs m WHERE ${pendingPayerRow('m')} AND m.sponsored AND m.sponsor_address = $1
          ORDER BY m.sponsor_nonce DESC LIMIT 1)) AS mempool
  )
  SELECT l.executed, l.mempool,
    CASE WHEN l.mempool > l.executed + 1 THEN ARRAY(
      SELECT DISTINCT n FROM (
        SELECT m.nonce AS n FROM mempool_txs m
        WHERE ${pendingPayerRow('m')} AND m.sender_address = $1 AND m.nonce > l.executed AND m.nonce < l.mempool
        UNION ALL
        SELECT m.sponsor_nonce FROM mempool_txs m
        WHERE ${pendingPayerRow('m')} AND m.sponsored AND m.sponsor_address = $1 AND m.sponsor_nonce > l.executed
          AND m.sponsor_nonce < l.mempool
      ) AS p ORDER BY n DESC) END AS between
  FROM last l`);

/** The principal's nonces at the tip and in the mempool (one statement). */
export async function getNonces(sql: Sql, principal: string): Promise<Nonces> {
  const [row] = await nonces(sql, principal);
  const lastExecuted = row.executed === null ? null : Number(row.executed);
  const lastMempool = row.mempool === null ? null : Number(row.mempool);
  const highest = Math.max(lastExecuted ?? -1, lastMempool ?? -1);
  const detectedMempool = (row.between ?? []).map(Number);
  const detectedMissing: number[] = [];
  if (lastExecuted !== null && lastMempool !== null && lastMempool > lastExecuted + 1) {
    const pending = new Set(detectedMempool);
    for (let n = lastMempool - 1; n > lastExecuted && detectedMissing.length < MAX_MISSING_NONCES; n--) {
      if (!pending.has(n)) detectedMissing.push(n);
    }
  }
  return { lastExecuted, lastMempool, possibleNext: highest + 1, detectedMempool, detectedMissing };
}

/**
 * A block for the nonces at it: by height, or by block hash (not index block hash), the canonical one first,
 * then the highest (docs/upstream.md C.11).
 */
export type NonceBlock = { height: number } | { hash: string };

interface NonceAtRow {
  found: boolean;
  nonce: string | null;
}

/**
 * $1 the principal, $2 the block height or null, $3 the block hash or null. The highest nonce of the canonical
 * txs the principal paid for up to the block's height: as sender of a non-sponsored tx, or as sponsor (the
 * tx's origin nonce, as the original counts). Each a backward step of its (principal, nonce) index, skipping
 * the txs above the height.
 */
const noncesAt = statement<NonceAtRow, [principal: string, height: number | null, hash: string | null]>(`
  WITH b AS (
    SELECT block_height FROM blocks
    WHERE block_height = $2::integer OR block_hash = $3::text
    ORDER BY canonical DESC, block_height DESC LIMIT 1
  )
  SELECT EXISTS (SELECT FROM b) AS found, greatest(
      (SELECT t.nonce FROM txs t, b WHERE t.sender_address = $1 AND NOT t.sponsored
        AND t.block_height <= b.block_height AND ${canonicalRow('t')} ORDER BY t.nonce DESC LIMIT 1),
      (SELECT t.nonce FROM txs t, b WHERE t.sponsored AND t.sponsor_address = $1
        AND t.block_height <= b.block_height AND ${canonicalRow('t')} ORDER BY t.nonce DESC LIMIT 1)) AS nonce`);

/** The principal's last executed nonce as of a block; `found` false when no block matches. */
export async function getNoncesAt(
  sql: Sql,
  principal: string,
  at: NonceBlock,
): Promise<{ found: boolean; lastExecuted: number | null; possibleNext: number }> {
  const [row] = await noncesAt(
    sql,
    principal,
    'height' in at ? at.height : null,
    'hash' in at ? at.hash : null,
  );
  const lastExecuted = row.nonce === null ? null : Number(row.nonce);
  return { found: row.found, lastExecuted, possibleNext: lastExecuted === null ? 0 : lastExecuted + 1 };
}
