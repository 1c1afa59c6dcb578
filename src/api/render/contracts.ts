import type { ContractDeployment } from '../../store/read/contracts.js';
import type { ContractStatusEntry, ContractStatusResponse } from '../schemas/contracts.js';

// Deployments → the contract status answer (contract 2.11).

/** One entry per requested id, in request order: its deployment, else `found: false`. */
export function contractStatuses(
  ids: string[],
  deployments: Map<string, ContractDeployment>,
): ContractStatusResponse {
  const body: Record<string, ContractStatusEntry> = {};
  for (const id of ids) {
    const d = deployments.get(id);
    if (!d) {
      body[id] = { found: false };
      continue;
    }
    body[id] = {
      found: true,
      result: {
        status: d.status,
        tx_id: d.tx_id,
        contract_id: d.contract_id,
        ...(d.block_height !== null ? { block_height: d.block_height } : {}),
      },
    };
  }
  return body;
}
