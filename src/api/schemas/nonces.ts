import Type from 'typebox';
import { errorResponses } from './common.js';
import { DEMO } from './examples.js';
import { PrincipalParam } from './params.js';

// GET /extended/v1/address/{principal}/nonces (docs/upstream.md C.11): what a wallet asks before it signs.

const AddressNoncesParams = Type.Object({ principal: PrincipalParam });

/** At most one of the two: both are a 400 (the handler's rule, between two parameters). */
const AddressNoncesQuery = Type.Object({
  block_height: Type.Optional(
    Type.Integer({
      minimum: 1,
      description: 'Nonces as of this block height (the mempool then plays no part); not with `block_hash`',
      examples: [DEMO.blockHeight],
    }),
  ),
  block_hash: Type.Optional(
    Type.String({
      pattern: '^0x[a-fA-F0-9]{64}$',
      description: 'Nonces as of the block of this block hash (0x + 64 hex digits); not with `block_height`',
      examples: [DEMO.blockHash],
      'x-expects': 'a block hash (0x and 64 hex digits)',
    }),
  ),
});

const nonceList = (description: string) => Type.Array(Type.Integer(), { description });

const AddressNonces = Type.Object(
  {
    last_mempool_tx_nonce: Type.Union([Type.Integer(), Type.Null()], {
      description:
        'Highest nonce of its pending transactions (its sponsor nonce where it sponsors); null when none',
    }),
    last_executed_tx_nonce: Type.Union([Type.Integer(), Type.Null()], {
      description:
        'Highest nonce of its canonical transactions (its sponsor nonce where it sponsors); null when none',
    }),
    possible_next_nonce: Type.Integer({
      description: 'One more than the higher of the two; 0 when both are null',
    }),
    detected_missing_nonces: nonceList(
      'Nonces between the last executed and the last pending one that no pending transaction has, highest first',
    ),
    detected_mempool_nonces: nonceList(
      'Nonces between the last executed and the last pending one that a pending transaction has, highest first',
    ),
  },
  { title: 'AddressNonces', description: 'The nonces an account has used, and the next one to sign with' },
);

/** A block that does not exist: 404 `No block found for <its identifier as JSON>`. */
export const getAccountNoncesRoute = {
  url: '/extended/v1/address/:principal/nonces',
  schema: {
    operationId: 'get_account_nonces',
    summary: 'Get the latest nonce used by an account',
    description:
      'The last executed and last pending nonce of an address, the next nonce to use, and the gaps between them.',
    tags: ['Accounts'],
    params: AddressNoncesParams,
    querystring: AddressNoncesQuery,
    response: { 200: AddressNonces, ...errorResponses },
  },
};
