import { NotFoundError } from '../../errors.js';
import { cachedChainState } from '../../store/read/chain-state.js';
import { findContractSource } from '../../store/read/contract-source.js';
import type { Store } from '../../store/store.js';
import { AnswerCache } from '../cache/answer-cache.js';
import { serializerOf } from '../render/serializer.js';
import { getContractByIdRoute } from '../schemas/contract-info.js';
import { principalProblem } from '../schemas/params.js';
import { holds, jsonAnswer, notModified, type Answer, type Asked } from './answer.js';
import { tipState, tipTag } from './tags.js';

// GET /extended/v1/contract/{contract_id} (docs/upstream.md C.16). Tagged by the tip, as the original tags
// it (a client holding the tag gets its 304 before any read).
//
// Caches (docs/caching.md): its whole answers, under the tip and its microblock, from the second ask of a URL
// (one answer per contract, its source code up to ~100 KB: a walk over every contract caches nothing). The
// deployment shown is ranked among all the stored ones, those off the canonical chain too
// (store/read/contract-source.ts): one with an ABI first, then canonical. A block stored as a sibling adds
// deployments without a new tip, and could outrank one that is not canonical or has no ABI; so only an answer
// showing a canonical deployment with its ABI, which nothing but a new tip or microblock can outrank, is
// cached. The others (a contract mined only on a fork, a deployment without ABI) are read on each request.

const FILE = 'src/api/answers/contract-info.ts';
/** A contract's answer on the bench chains (~4 KB of source and ABI), with its URL and tag. */
const CONTRACT_TYPICAL_BYTES = 4096;

const writeContract = serializerOf(getContractByIdRoute.schema.response[200]);

export function contractInfoAnswers(store: Store) {
  const contractAnswers = new AnswerCache({
    name: 'answers: v1 contract',
    file: FILE,
    state: tipState(store),
    maxBytes: 4 * 1024 * 1024,
    cacheOnSecondAsk: true,
    typicalAnswerBytes: CONTRACT_TYPICAL_BYTES,
  });

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
    const answer = jsonAnswer(writeContract(body), etag);
    answer.siblingMayChange = !found.canonical || found.abi === null;
    return answer;
  }

  return {
    cache: contractAnswers,
    contract: (asked: Asked, contractId: string) => contractAnswers.made(() => contract(asked, contractId)),
  };
}
