import Type, { type TProperties } from 'typebox';
import { errorResponses } from './common.js';
import { DEMO } from './examples.js';

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
    description: 'Add the whole transaction, block or balance found, as `metadata`',
    examples: [false],
  }),
});

const metadata = Type.Optional(
  Type.Unknown({ description: 'With `include_metadata`: the entity found, whole' }),
);

/** A found entity: its id, its type, what is said of it, and its metadata when asked. */
const found = (entityType: string, described: TProperties, description: string) =>
  Type.Object(
    {
      entity_id: Type.String({ description: 'The lowercased hash, or the principal as given' }),
      entity_type: Type.Literal(entityType),
      ...described,
      metadata,
    },
    { description },
  );

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

const SearchResult = Type.Union([
  found('tx_id', { tx_data: MinedTxData }, 'A stored transaction (canonical or not)'),
  found('mempool_tx_id', { tx_data: Type.Object({ tx_type: Type.String() }) }, 'A pending transaction'),
  found('block_hash', { block_data: BlockData }, 'A stored block, by block hash'),
  found('contract_address', { tx_data: DeployTxData }, 'A contract with a deploy transaction'),
  found('standard_address', {}, 'An address some stored transaction or event names'),
]);

const SearchFound = Type.Object(
  { found: Type.Literal(true), result: SearchResult },
  { title: 'SearchFound', description: 'What the id names' },
);

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
