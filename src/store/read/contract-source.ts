import type { Sql } from '../db.js';
import { statement } from '../statement.js';

// A contract as deployed (docs/upstream.md C.16): its stored deployment (smart_contracts, a row per block it
// was mined in) with its deploy tx's source code.

export interface ContractSource {
  contract_id: string;
  tx_id: string;
  canonical: boolean;
  block_height: number;
  /** null for the original deploy type */
  clarity_version: number | null;
  source_code: string;
  /** the ABI as stored (jsonb, its keys in jsonb order), null when the node sent none */
  abi: unknown;
}

/** The deployment with an ABI first, then canonical, then on the canonical microblock stream, then the highest. */
const contractSource = statement<ContractSource, [contractId: string]>(`
  SELECT s.contract_id, s.tx_id, s.canonical, s.block_height, s.clarity_version, s.abi,
    t.payload -> 'smart_contract' ->> 'source_code' AS source_code
  FROM smart_contracts s
  JOIN txs t ON t.tx_id = s.tx_id AND t.index_block_hash = s.index_block_hash AND t.microblock_hash = s.microblock_hash
  WHERE s.contract_id = $1
  ORDER BY s.abi IS NOT NULL DESC, s.canonical DESC, s.microblock_canonical DESC, s.block_height DESC
  LIMIT 1`);

/** A contract's deployment by id (exact), or undefined. */
export async function findContractSource(sql: Sql, contractId: string): Promise<ContractSource | undefined> {
  const [row] = await contractSource(sql, contractId);
  return row;
}
