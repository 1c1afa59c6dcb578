import { NotFoundError } from '../../errors.js';
import { cachedChainState } from '../../store/read/chain-state.js';
import { findContractSource } from '../../store/read/contract-source.js';
import { searchAddress, searchContract, searchHash } from '../../store/read/search.js';
import { txTypeName } from '../../store/schema/codes.js';
import type { Store } from '../../store/store.js';
import { serializerOf } from '../render/serializer.js';
import { getContractByIdRoute } from '../schemas/contract-info.js';
import { principalProblem } from '../schemas/params.js';
import { searchByIdRoute } from '../schemas/search.js';
import { holds, jsonAnswer, notModified, type Answer, type Asked } from './answer.js';
import { tipTag } from './tags.js';

// GET /extended/v1/contract/{contract_id} (docs/upstream.md C.16) and /extended/v1/search/{id} (C.17). A
// contract's answer is tagged by the tip, as the original tags it (a client holding the tag gets its 304
// before any read); a search is untagged (it shows the mempool, and the original tags none).

const writeContract = serializerOf(getContractByIdRoute.schema.response[200]);
const writeFound = serializerOf(searchByIdRoute.schema.response[200]);
const writeNotFound = serializerOf(searchByIdRoute.schema.response[404]);

/** A hash as search reads it: `0x` (lower case) and 64 hex digits, or 64 hex digits alone. */
const HASH = /^(0x)?[0-9a-fA-F]{64}$/;

/** An unconfirmed microblock tx has no block hash yet: `0x`, as its transaction object shows it. */
const shownBlockHash = (hash: string) => hash || '0x';

// eslint-disable-next-line max-lines-per-function -- a factory: the answer functions of the family and what they share, each under 80 lines
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

  const notFound = (entityType: string, error: string): Answer => ({
    status: 404,
    body: writeNotFound({ found: false, result: { entity_type: entityType }, error }),
  });
  /** A found entity; its members are those of its `entity_type`'s branch of the schema's union. */
  const foundAnswer = (result: { entity_id: string; entity_type: string; [member: string]: unknown }) =>
    jsonAnswer(writeFound({ found: true, result } as Parameters<typeof writeFound>[0]));

  /** A hash: a stored tx, a pending one, or a block by block hash, in that order. */
  async function searchForHash(hash: string): Promise<Answer> {
    const hits = await searchHash(store.sql, hash);
    if (hits.tx) {
      const { canonical, block_hash, burn_block_time, block_height, type_id } = hits.tx;
      return foundAnswer({
        entity_id: hash,
        entity_type: 'tx_id',
        tx_data: {
          canonical,
          block_hash: shownBlockHash(block_hash),
          burn_block_time,
          block_height,
          tx_type: txTypeName(type_id),
        },
      });
    }
    if (hits.mempoolTx) {
      return foundAnswer({
        entity_id: hash,
        entity_type: 'mempool_tx_id',
        tx_data: { tx_type: txTypeName(hits.mempoolTx.type_id) },
      });
    }
    if (hits.block) {
      const { canonical, block_hash, parent_block_hash, burn_block_time, block_height } = hits.block;
      return foundAnswer({
        entity_id: hash,
        entity_type: 'block_hash',
        block_data: { canonical, hash: block_hash, parent_block_hash, burn_block_time, height: block_height },
      });
    }
    return notFound('unknown_hash', `No block or transaction found with hash "${hash}"`);
  }

  /** A principal: a contract with a deploy tx, or an address some tx or event names. */
  async function searchForPrincipal(principal: string): Promise<Answer> {
    if (principal.includes('.')) {
      const deploy = await searchContract(store.sql, principal);
      if (!deploy) {
        return notFound('contract_address', `No principal found with address "${principal}"`);
      }
      const tx_type = txTypeName(deploy.type_id);
      const tx_data = deploy.mined
        ? {
            tx_type,
            tx_id: deploy.tx_id,
            canonical: deploy.canonical!,
            block_hash: shownBlockHash(deploy.block_hash!),
            burn_block_time: deploy.burn_block_time!,
            block_height: deploy.block_height!,
          }
        : { tx_type, tx_id: deploy.tx_id };
      return foundAnswer({ entity_id: principal, entity_type: 'contract_address', tx_data });
    }
    if (!(await searchAddress(store.sql, principal))) {
      return notFound('standard_address', `No principal found with address "${principal}"`);
    }
    return foundAnswer({ entity_id: principal, entity_type: 'standard_address' });
  }

  /** What an id names (C.17): a hash, a principal, or nothing a search reads. */
  async function search(id: string): Promise<Answer> {
    const term = id.trim();
    const isHash = HASH.test(term) && (term.length === 64 || term.startsWith('0x'));
    if (isHash) return searchForHash(`0x${term.replace(/^0x/, '').toLowerCase()}`);
    if (principalProblem(term) === null) return searchForPrincipal(term);
    return notFound(
      'invalid_term',
      `The term "${term}" is not a valid block hash, transaction ID, contract principal, or account address principal`,
    );
  }

  return { contract, search };
}
