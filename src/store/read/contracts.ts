import type { Sql } from '../db.js';
import { DEPLOY_TYPE_IDS, txStatusName } from '../schema/codes.js';
import { statement } from '../statement.js';
import { canonicalRow } from '../visibility.js';

export interface ContractDeployment {
  contract_id: string;
  tx_id: string;
  /** the deploy tx's status name (`success`, `abort_by_response`...), or `pending` while in the mempool */
  status: string;
  /** null for a pending deployment */
  block_height: number | null;
}

interface DeploymentRow {
  contract_id: string;
  tx_id: string;
  status: number;
  block_height: number | null;
  mined: boolean;
}

const deploymentsOf = statement<DeploymentRow, [contractIds: string[]]>(`
  WITH mined AS (
    SELECT DISTINCT ON (t.smart_contract_contract_id)
      t.smart_contract_contract_id AS contract_id, t.tx_id, t.status, t.block_height
    FROM txs t
    WHERE t.smart_contract_contract_id = ANY($1::text[]) AND t.type_id IN (${DEPLOY_TYPE_IDS.join(', ')})
      AND ${canonicalRow('t')}
    ORDER BY t.smart_contract_contract_id, t.block_height DESC, t.microblock_sequence DESC, t.tx_index DESC
  )
  SELECT contract_id, tx_id, status, block_height, true AS mined FROM mined
  UNION ALL
  (
    SELECT DISTINCT ON (m.smart_contract_contract_id)
      m.smart_contract_contract_id, m.tx_id, m.status, NULL::integer, false
    FROM mempool_txs m
    WHERE m.smart_contract_contract_id = ANY($1::text[]) AND NOT m.pruned
      AND m.type_id IN (${DEPLOY_TYPE_IDS.join(', ')})
      AND m.smart_contract_contract_id NOT IN (SELECT contract_id FROM mined)
    ORDER BY m.smart_contract_contract_id, m.nonce, m.receipt_time, m.tx_id
  )`);

/**
 * The deployment of each contract id: the latest canonical deploy tx (failed ones included; unconfirmed
 * microblock txs too, as they are canonical), else the pending mempool deploy with the lowest nonce. Ids
 * without either are absent from the map. Exact, case-sensitive match; both parts are index lookups. One
 * flat statement, built once: visible as to an `unanchored` read (canonical, on the canonical microblock
 * stream).
 */
export async function findContractDeployments(
  sql: Sql,
  contractIds: string[],
): Promise<Map<string, ContractDeployment>> {
  if (contractIds.length === 0) return new Map();
  const rows = await deploymentsOf(sql, contractIds);
  return new Map(
    rows.map((r) => [
      r.contract_id,
      {
        contract_id: r.contract_id,
        tx_id: r.tx_id,
        status: r.mined ? txStatusName(r.status) : 'pending',
        block_height: r.mined ? r.block_height : null,
      },
    ]),
  );
}
