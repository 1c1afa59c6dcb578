import Type, { type TProperties, type TSchema } from 'typebox';
import { StxBalance } from './addresses.js';
import { BlockV1 } from './blocks.js';
import { errorResponses } from './common.js';
import { DEMO } from './examples.js';
import { MempoolTransaction, Transaction } from './transactions.js';

// GET /extended/v1/search/{id} (docs/upstream.md C.17): what an id names. Each kind of entity is its own
// result shape, told apart by `entity_type` (the serializer picks the branch a result matches, so each
// branch keeps its own key order: a mined transaction's `tx_data` and a contract's differ).

const SearchParams = Type.Object({
  id: Type.String({
    description:
      'A block hash, transaction id (64 hex digits, 0x optional), Stacks address or contract id; trimmed',
    examples: [DEMO.txId],
  }),
});

const SearchQuery = Type.Object({
  include_metadata: Type.Boolean({
    default: false,
    description:
      'Add the entity found, whole, as `metadata`: the transaction, the block, or an address’s STX balance',
    examples: [false],
  }),
});

const MinedTxData = Type.Object({
  canonical: Type.Boolean(),
  block_hash: Type.String(),
  burn_block_time: Type.Integer(),
  block_height: Type.Integer(),
  tx_type: Type.String(),
});

const DeployTxData = Type.Union(
  [
    Type.Object({
      tx_type: Type.String(),
      tx_id: Type.String(),
      canonical: Type.Boolean(),
      block_hash: Type.String(),
      burn_block_time: Type.Integer(),
      block_height: Type.Integer(),
    }),
    Type.Object({ tx_type: Type.String(), tx_id: Type.String() }),
  ],
  { description: 'The deploy transaction: mined, or pending (type and id only)' },
);

const BlockData = Type.Object({
  canonical: Type.Boolean(),
  hash: Type.String(),
  parent_block_hash: Type.String(),
  burn_block_time: Type.Integer(),
  height: Type.Integer(),
});

/** What `include_metadata` adds to each kind of result: the entity, as its own route renders it. */
interface Metadata {
  tx: TSchema;
  mempoolTx: TSchema;
  block: TSchema;
  deploy: TSchema;
  balance: TSchema;
}

/**
 * The branches of a search result, one per kind of entity: its id, its type, what is said of it, and the
 * entity whole (`metadata`) when asked; without `metadata` given, the branches have no such member.
 */
function searchResult(metadata?: Metadata) {
  const found = (
    entityType: string,
    described: TProperties,
    about: TSchema | undefined,
    description: string,
  ) =>
    Type.Object(
      {
        entity_id: Type.String({ description: 'The lowercased hash, or the principal as given' }),
        entity_type: Type.Literal(entityType),
        ...described,
        ...(about ? { metadata: Type.Optional(about) } : {}),
      },
      { description },
    );
  return Type.Union([
    found(
      'tx_id',
      { tx_data: MinedTxData },
      metadata?.tx,
      'A stored transaction (canonical or not); `metadata`: the canonical transaction as `GET /extended/v1/tx` lists it (`events` empty)',
    ),
    found(
      'mempool_tx_id',
      { tx_data: Type.Object({ tx_type: Type.String() }) },
      metadata?.mempoolTx,
      'A pending transaction; `metadata`: the mempool transaction (with `include_metadata`, dropped ones too)',
    ),
    found(
      'block_hash',
      { block_data: BlockData },
      metadata?.block,
      'A stored block, by block hash; `metadata`: the block as `GET /extended/v1/block/by_burn_block_height/{burn_block_height}` shows it',
    ),
    found(
      'contract_address',
      { tx_data: DeployTxData },
      metadata?.deploy,
      'A contract with a deploy transaction; `metadata`: that transaction, mined (`events` empty) or pending',
    ),
    found(
      'standard_address',
      {},
      metadata?.balance,
      'An address some stored transaction or event names; `metadata`: its STX balance at the tip, unconfirmed microblocks included, without pending totals',
    ),
  ]);
}

const SearchFound = Type.Object(
  {
    found: Type.Literal(true),
    result: searchResult({
      tx: Transaction,
      mempoolTx: MempoolTransaction,
      block: BlockV1,
      deploy: Type.Union([Transaction, MempoolTransaction]),
      balance: StxBalance,
    }),
  },
  { title: 'SearchFound', description: 'What the id names' },
);

/**
 * The 200 answer as its serializer is given it: without `metadata`, which answers/search.ts splices in as the
 * JSON text the entity's own serializer wrote (compiling the metadata schemas into this serializer would cost
 * start-up time for a member it never writes).
 */
export const SearchFoundWithoutMetadata = Type.Object({
  found: Type.Literal(true),
  result: searchResult(),
});

const SearchNotFound = Type.Object(
  {
    found: Type.Literal(false),
    result: Type.Object({
      entity_type: Type.String({
        description: 'unknown_hash | contract_address | standard_address | invalid_term',
      }),
    }),
    error: Type.String(),
  },
  { title: 'SearchNotFound', description: 'Nothing found: what the id was read as, and why' },
);

export const searchByIdRoute = {
  url: '/extended/v1/search/:id',
  schema: {
    operationId: 'search_by_id',
    summary: 'Search',
    description:
      'What an id names: a transaction (mined or pending), a block (by block hash), a contract or an address. A block height is not searched.',
    tags: ['Search'],
    params: SearchParams,
    querystring: SearchQuery,
    response: { ...errorResponses, 200: SearchFound, 404: SearchNotFound },
  },
};
