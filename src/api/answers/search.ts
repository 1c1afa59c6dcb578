import { resolveScope } from '../../store/read/account-scope.js';
import { getAccountBalances } from '../../store/read/balances.js';
import { findV1Block } from '../../store/read/blocks.js';
import { cachedChainState } from '../../store/read/chain-state.js';
import {
  searchAddress,
  searchContract,
  searchHash,
  type ContractDeployHit,
} from '../../store/read/search.js';
import { findMempoolTx, findMinedTx, findMinedTxByKey } from '../../store/read/txs.js';
import { txTypeName } from '../../store/schema/codes.js';
import type { Store } from '../../store/store.js';
import { balancesJson } from '../render/addresses.js';
import { blockV1Body } from '../render/blocks.js';
import { serializerOf } from '../render/serializer.js';
import { mempoolTransaction, minedTransaction } from '../render/txs.js';
import { StxBalance } from '../schemas/addresses.js';
import { principalProblem } from '../schemas/params.js';
import { SearchFoundWithoutMetadata, searchByIdRoute } from '../schemas/search.js';
import { MempoolTransaction, Transaction } from '../schemas/transactions.js';
import { jsonAnswer, type Answer, type JsonText } from './answer.js';

// GET /extended/v1/search/{id} (docs/upstream.md C.17): what an id names. Untagged, as the original tags none.
// Not cached (docs/caching.md), the one route beyond the ten whose answers are not: a hash is found among every
// stored tx and block, those off the canonical chain too, so a block stored as a sibling (the tip stays)
// changes answers that no chain state would tell stale; and its key space is any id, each one seldom asked
// twice (an explorer's search box), where a cache would mostly hold answers never asked again.
//
// With `include_metadata=true` the entity found comes whole, as `metadata`, written by the serializer of its own
// route's schema: a mined tx as the tx lists show it (no events), a mempool tx, the v1 block, an address's STX
// balance. The original finds a hash's entity another way then (searchHashWithMetadata): the tx visible to an
// unanchored read, else its mempool row, dropped ones included, else the block; so a tx stored only off the
// canonical chain is found without metadata and not with it (C.17).

const writeFound = serializerOf(SearchFoundWithoutMetadata);
const writeNotFound = serializerOf(searchByIdRoute.schema.response[404]);
const writeMined = serializerOf(Transaction);
const writeMempool = serializerOf(MempoolTransaction);
const writeStxBalance = serializerOf(StxBalance);

/** A hash as search reads it: `0x` (lower case) and 64 hex digits, or 64 hex digits alone. */
const HASH = /^(0x)?[0-9a-fA-F]{64}$/;

/** An unconfirmed microblock tx has no block hash yet: `0x`, as its transaction object shows it. */
const shownBlockHash = (hash: string) => hash || '0x';

/** No page of events: the metadata of a mined tx has `events: []`, as the original's parseDbTx leaves it. */
const NO_EVENTS = { offset: 0, limit: 0 };

interface Found {
  entity_id: string;
  entity_type: string;
  [member: string]: unknown;
}

/**
 * A found entity, its members those of its `entity_type`'s branch of the schema's union; with `metadata`, that
 * JSON text as the result's last member (where the original's schema puts it).
 */
function foundAnswer(result: Found, metadata?: JsonText): Answer {
  const json = writeFound({ found: true, result } as Parameters<typeof writeFound>[0]);
  if (metadata === undefined) return jsonAnswer(json);
  // the text ends with the result's and the answer's closing braces
  const head = json.slice(0, -2);
  return jsonAnswer(
    Buffer.concat([Buffer.from(`${head},"metadata":`), Buffer.from(metadata), Buffer.from('}}')]),
  );
}

const notFound = (entityType: string, error: string): Answer => ({
  status: 404,
  body: writeNotFound({ found: false, result: { entity_type: entityType }, error }),
});

const unknownHash = (hash: string) =>
  notFound('unknown_hash', `No block or transaction found with hash "${hash}"`);

// eslint-disable-next-line max-lines-per-function -- a factory: the answer functions of the route and what they share, each under 80 lines
export function searchAnswers(store: Store) {
  /** A hash: a stored tx (canonical or not), a pending one, or a block by block hash, in that order. */
  async function hashFound(hash: string): Promise<Answer> {
    const hits = await searchHash(store.sql, hash);
    if (hits.tx) {
      const { canonical, block_hash, burn_block_time, block_height, type_id } = hits.tx;
      const tx_data = {
        canonical,
        block_hash: shownBlockHash(block_hash),
        burn_block_time,
        block_height,
        tx_type: txTypeName(type_id),
      };
      return foundAnswer({ entity_id: hash, entity_type: 'tx_id', tx_data });
    }
    if (hits.mempoolTx) {
      const tx_data = { tx_type: txTypeName(hits.mempoolTx.type_id) };
      return foundAnswer({ entity_id: hash, entity_type: 'mempool_tx_id', tx_data });
    }
    if (hits.block) {
      const { canonical, block_hash, parent_block_hash, burn_block_time, block_height } = hits.block;
      const block_data = {
        canonical,
        hash: block_hash,
        parent_block_hash,
        burn_block_time,
        height: block_height,
      };
      return foundAnswer({ entity_id: hash, entity_type: 'block_hash', block_data });
    }
    return unknownHash(hash);
  }

  /**
   * A hash with its entity whole: the canonical tx an unanchored read sees, else the mempool row (dropped ones
   * too), else the block of that block hash (canonical first).
   */
  async function hashFoundWithMetadata(hash: string): Promise<Answer> {
    const mined = await findMinedTx(store.sql, hash, { unanchored: true }, NO_EVENTS);
    if (mined) {
      const tx = minedTransaction(mined);
      const tx_data = {
        canonical: tx.canonical,
        block_hash: tx.block_hash,
        burn_block_time: tx.burn_block_time,
        block_height: tx.block_height,
        tx_type: tx.tx_type,
      };
      return foundAnswer({ entity_id: hash, entity_type: 'tx_id', tx_data }, writeMined(tx));
    }
    const pending = await findMempoolTx(store.sql, hash, { unanchored: true });
    if (pending) {
      const tx = mempoolTransaction(pending);
      const tx_data = { tx_type: tx.tx_type };
      return foundAnswer({ entity_id: hash, entity_type: 'mempool_tx_id', tx_data }, writeMempool(tx));
    }
    const block = await findV1Block(store.sql, 'block_hash', hash);
    if (block) {
      const { canonical, block_hash, parent_block_hash, burn_block_time, block_height } = block;
      const block_data = {
        canonical,
        hash: block_hash,
        parent_block_hash,
        burn_block_time,
        height: block_height,
      };
      return foundAnswer({ entity_id: hash, entity_type: 'block_hash', block_data }, blockV1Body(block));
    }
    return unknownHash(hash);
  }

  /** The deploy tx whole: its mined row (the one found, canonical or not) or its mempool row. */
  async function deployMetadata(deploy: ContractDeployHit): Promise<JsonText | undefined> {
    if (deploy.mined) {
      const key = {
        tx_id: deploy.tx_id,
        index_block_hash: deploy.index_block_hash!,
        microblock_hash: deploy.microblock_hash!,
      };
      const row = await findMinedTxByKey(store.sql, key, null);
      return row && writeMined(minedTransaction(row));
    }
    const row = await findMempoolTx(store.sql, deploy.tx_id, { unanchored: true });
    return row && writeMempool(mempoolTransaction(row));
  }

  /**
   * An address's STX balance as the original's search reads it: at the tip + 1 (unconfirmed microblocks
   * count), without the pending mempool totals or a vesting schedule; the `stx` of the balances otherwise.
   */
  async function stxBalanceMetadata(address: string): Promise<JsonText> {
    const tip = (await cachedChainState(store)).block_height;
    const scope = await resolveScope(store.sql, { unanchored: true }, tip);
    const found = await getAccountBalances(store.sql, address, scope, { withPending: false });
    return writeStxBalance(balancesJson(found, scope.height).stx);
  }

  /** A principal: a contract with a deploy tx, or an address some tx or event names. */
  async function principalFound(principal: string, withMetadata: boolean): Promise<Answer> {
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
      const metadata = withMetadata ? await deployMetadata(deploy) : undefined;
      return foundAnswer({ entity_id: principal, entity_type: 'contract_address', tx_data }, metadata);
    }
    if (!(await searchAddress(store.sql, principal))) {
      return notFound('standard_address', `No principal found with address "${principal}"`);
    }
    const metadata = withMetadata ? await stxBalanceMetadata(principal) : undefined;
    return foundAnswer({ entity_id: principal, entity_type: 'standard_address' }, metadata);
  }

  /** What an id names (C.17): a hash, a principal, or nothing a search reads. */
  async function search(id: string, query: { include_metadata: boolean }): Promise<Answer> {
    const term = id.trim();
    const isHash = HASH.test(term) && (term.length === 64 || term.startsWith('0x'));
    if (isHash) {
      const hash = `0x${term.replace(/^0x/, '').toLowerCase()}`;
      return query.include_metadata ? hashFoundWithMetadata(hash) : hashFound(hash);
    }
    if (principalProblem(term) === null) return principalFound(term, query.include_metadata);
    return notFound(
      'invalid_term',
      `The term "${term}" is not a valid block hash, transaction ID, contract principal, or account address principal`,
    );
  }

  return { search };
}
