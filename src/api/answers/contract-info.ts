import { NotFoundError } from '../../errors.js';
import { cachedChainState } from '../../store/read/chain-state.js';
import { findContractSource } from '../../store/read/contract-source.js';
import type { Store } from '../../store/store.js';
import { serializerOf } from '../render/serializer.js';
import { getContractByIdRoute } from '../schemas/contract-info.js';
import { principalProblem } from '../schemas/params.js';
import { holds, jsonAnswer, notModified, type Answer, type Asked } from './answer.js';
import { tipTag } from './tags.js';

// GET /extended/v1/contract/{contract_id} (docs/upstream.md C.16). Tagged by the tip, as the original tags
// it (a client holding the tag gets its 304 before any read).

const writeContract = serializerOf(getContractByIdRoute.schema.response[200]);

export function contractInfoAnswers(store: Store) {
  async function contract(asked: Asked, contractId: string): Promise<Answer> {
    const etag = tipTag(await cachedChainState(store)) ?? undefined;
    if (etag !== undefined && holds(asked, etag)) return notModified(etag);
    // what is no principal names no contract, and is not sent to the database (which refuses a NUL)
    const found =
      principalProblem(contractId) === null ? await findContractSource(store.sql, contractId) : undefined;
    if (!found) throw new NotFoundError('cannot find contract by ID');
    const body = {
      tx_id: found.tx_id,
      canonical: found.canonical,
      contract_id: found.contract_id,
      block_height: found.block_height,
      clarity_version: found.clarity_version,
      source_code: found.source_code,
      // as text, the stored (jsonb) key order kept: what the original sends
      abi: found.abi === null ? null : JSON.stringify(found.abi),
    };
    return jsonAnswer(writeContract(body), etag);
  }

  return { contract };
}
