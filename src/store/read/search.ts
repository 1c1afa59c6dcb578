import type { Sql } from '../db.js';
import { DEPLOY_TYPE_IDS } from '../schema/codes.js';
import { statement } from '../statement.js';
import { canonicalRow } from '../visibility.js';

// What an id names (docs/upstream.md C.17): a hash is a tx (mined, canonical or not, else pending) or a block
// (by block hash, canonical or not); a principal is a contract (by its deploy tx, pending or mined) or an
// address (any stored tx or event it takes part in). Each lookup is an index probe.

export interface MinedTxHit {
  tx_id: string;
  canonical: boolean;
  block_hash: string;
  burn_block_time: number;
  block_height: number;
  type_id: number;
}

export interface BlockHit {
  canonical: boolean;
  block_hash: string;
  parent_block_hash: string;
  burn_block_time: number;
  block_height: number;
}

export interface HashHits {
  /** the stored tx of that id: the canonical row when there is one, else the highest */
  tx: MinedTxHit | null;
  /** the pending mempool tx of that id */
  mempoolTx: { tx_id: string; type_id: number } | null;
  /** the stored block of that block hash (not index block hash): the canonical one, else the highest */
  block: BlockHit | null;
}

const hashHits = statement<
  { tx: MinedTxHit | null; mempool_tx: HashHits['mempoolTx']; block: BlockHit | null },
  [hash: string]
>(`
  SELECT
    (SELECT row_to_json(x) FROM (
      SELECT t.tx_id, ${canonicalRow('t')} AS canonical, t.block_hash, t.burn_block_time,
        t.block_height, t.type_id
      FROM txs t WHERE t.tx_id = $1
      ORDER BY t.canonical DESC, t.microblock_canonical DESC, t.block_height DESC LIMIT 1) AS x) AS tx,
    (SELECT row_to_json(x) FROM (
      SELECT m.tx_id, m.type_id FROM mempool_txs m WHERE m.tx_id = $1 AND NOT m.pruned) AS x) AS mempool_tx,
    (SELECT row_to_json(x) FROM (
      SELECT b.canonical, b.block_hash, b.parent_block_hash, b.burn_block_time, b.block_height
      FROM blocks b WHERE b.block_hash = $1
      ORDER BY b.canonical DESC, b.block_height DESC LIMIT 1) AS x) AS block`);

/** The tx, pending tx and block a hash (lowercase, 0x) names, each null when none. One statement. */
export async function searchHash(sql: Sql, hash: string): Promise<HashHits> {
  const [row] = await hashHits(sql, hash);
  return { tx: row.tx, mempoolTx: row.mempool_tx, block: row.block };
}

export interface ContractDeployHit {
  tx_id: string;
  type_id: number;
  /** false for a pending deploy (no block fields then) */
  mined: boolean;
  canonical: boolean | null;
  block_hash: string | null;
  burn_block_time: number | null;
  block_height: number | null;
  /** the key of the mined row (null for a pending deploy) */
  index_block_hash: string | null;
  microblock_hash: string | null;
}

const DEPLOYS = `t.type_id IN (${DEPLOY_TYPE_IDS.join(', ')})`;

/** A contract's deploy tx: a pending one first (lowest nonce), else the stored one (canonical first, highest). */
const contractDeploy = statement<ContractDeployHit, [contractId: string]>(`
  (SELECT t.tx_id, t.type_id, false AS mined, NULL::boolean AS canonical, NULL::text AS block_hash,
    NULL::bigint AS burn_block_time, NULL::integer AS block_height, NULL::text AS index_block_hash,
    NULL::text AS microblock_hash
  FROM mempool_txs t WHERE t.smart_contract_contract_id = $1 AND NOT t.pruned AND ${DEPLOYS}
  ORDER BY t.nonce, t.receipt_time, t.tx_id LIMIT 1)
  UNION ALL
  (SELECT t.tx_id, t.type_id, true, ${canonicalRow('t')}, t.block_hash, t.burn_block_time,
    t.block_height, t.index_block_hash, t.microblock_hash
  FROM txs t WHERE t.smart_contract_contract_id = $1 AND ${DEPLOYS}
  ORDER BY t.canonical DESC, t.microblock_canonical DESC, t.block_height DESC LIMIT 1)
  LIMIT 1`);

/** The deploy tx of a contract id, pending or stored, or undefined (a boot contract without its deploy tx). */
export async function searchContract(sql: Sql, contractId: string): Promise<ContractDeployHit | undefined> {
  const [row] = await contractDeploy(sql, contractId);
  return row;
}

const addressSeen = statement<{ seen: boolean }, [address: string]>(
  'SELECT EXISTS (SELECT FROM principal_txs WHERE principal = $1) AS seen',
);

/**
 * Whether a stored tx, canonical or not, has the address as sender or token-transfer recipient, or an STX, FT
 * or NFT event has it as a party: whether the principal index holds a row of it.
 */
export async function searchAddress(sql: Sql, address: string): Promise<boolean> {
  const [row] = await addressSeen(sql, address);
  return row.seen;
}
