import { cachedChainState } from '../../store/read/chain-state.js';
import { findContractDeployments } from '../../store/read/contracts.js';
import type { Store } from '../../store/store.js';
import { AnswerCache } from '../cache/answer-cache.js';
import { contractStatuses } from '../render/contracts.js';
import { serializerOf } from '../render/serializer.js';
import { ContractStatusResponse } from '../schemas/contracts.js';
import { holds, jsonAnswer, notModified, type Answer, type Asked } from './answer.js';
import { tipState, tipTag } from './tags.js';

// GET /extended/v2/smart-contracts/status.
//
// Caches (docs/caching.md): the route's whole answers. The tag is the tip, as upstream's (a mempool deploy keeps
// it), but a pending deployment shows in the answer: an answer shows the mempool, so a mempool change makes it
// stale too. Each answer is < 1 KB per id: the default 8 MB bound holds thousands of id sets. The chain state
// comes from its cache (store/read/chain-state.ts).

const writeStatuses = serializerOf(ContractStatusResponse);

export function contractAnswers(store: Store) {
  const statusAnswers = new AnswerCache({
    name: 'answers: contract statuses',
    file: 'src/api/answers/contract.ts',
    state: tipState(store),
    showsMempool: 'every answer',
  });

  /**
   * The deployment status of each id (distinct, in request order): the latest canonical deployment, else the
   * pending one with the lowest nonce, else `found: false`.
   */
  async function statuses(asked: Asked, given: string | string[]): Promise<Answer> {
    const tag = tipTag(await cachedChainState(store)) ?? undefined;
    if (tag !== undefined && holds(asked, tag)) return notModified(tag);
    const ids = [...new Set(typeof given === 'string' ? [given] : given)];
    const body = writeStatuses(contractStatuses(ids, await findContractDeployments(store.sql, ids)));
    return jsonAnswer(body, tag, true);
  }

  return {
    caches: { statuses: statusAnswers },
    statuses: (asked: Asked, ids: string | string[]) => statusAnswers.made(() => statuses(asked, ids)),
  };
}
