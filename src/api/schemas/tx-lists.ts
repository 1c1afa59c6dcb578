import Type from 'typebox';
import { errorResponses } from './common.js';
import { DEMO } from './examples.js';
import { Page, pageQuery } from './lists.js';
import { PrincipalParam, TxQuery, UnanchoredQuery } from './params.js';
import { MempoolTransaction, Transaction } from './transactions.js';

// GET /extended/v1/tx (recent transactions), /extended/v1/tx/mempool and
// /extended/v1/address/{principal}/mempool (docs/upstream.md C.6 to C.8).

const TX_TYPES = [
  'coinbase',
  'token_transfer',
  'smart_contract',
  'contract_call',
  'poison_microblock',
  'tenure_change',
] as const;

const TxListQuery = Type.Object({
  ...pageQuery('transaction', 'Transactions'),
  type: Type.Optional(
    Type.Array(Type.Enum(TX_TYPES), {
      description:
        'Only transactions of these types: repeat the key, or separate them by commas. `smart_contract` includes versioned deploys, `coinbase` every coinbase form',
      examples: [['contract_call', 'token_transfer']],
    }),
  ),
  unanchored: UnanchoredQuery,
  exclude_function_args: TxQuery.exclude_function_args,
});

/** `type=a,b` and `type=a&type=b` both name several types (a preValidation hook of the route). */
async function splitTxTypes(request: { query: unknown }) {
  const query = request.query as { type?: string | string[] };
  if (query.type === undefined) return;
  query.type = [query.type].flat().flatMap((value) => value.split(','));
}

const TransactionPage = Page(Transaction, {
  title: 'TransactionPage',
  description:
    'Canonical transactions, newest first (by height, then microblock sequence and index, descending), with `events: []`. Without `type`, `total` is the sum of the canonical blocks’ transaction counts',
});

export const getTransactionListRoute = {
  url: '/extended/v1/tx',
  schema: {
    operationId: 'get_transaction_list',
    summary: 'Get recent transactions',
    description: 'Canonical transactions, newest first, optionally of some types only.',
    tags: ['Transactions'],
    querystring: TxListQuery,
    response: { 200: TransactionPage, ...errorResponses },
  },
  preValidation: splitTxTypes,
};

/** A principal a mempool list is filtered by (the address pattern first, then the principal check). */
const principalFilter = (description: string) =>
  Type.Union(PrincipalParam.anyOf, {
    description,
    examples: [DEMO.busyAddress],
    'x-expects': (PrincipalParam as { 'x-expects'?: string })['x-expects'],
    'x-check': 'principal',
  });

const mempoolListFields = {
  ...pageQuery('transaction', 'Transactions'),
  unanchored: Type.Boolean({
    default: false,
    description:
      'Leave out the transactions of unconfirmed microblocks (listed as pending otherwise: they left the mempool but are not confirmed)',
    examples: [false],
  }),
  exclude_function_args: TxQuery.exclude_function_args,
};

const MempoolTxListQuery = Type.Object({
  sender_address: Type.Optional(principalFilter('Only transactions this principal sends')),
  recipient_address: Type.Optional(
    principalFilter('Only token transfers to this principal (with `sender_address`: both must hold)'),
  ),
  address: Type.Optional(
    principalFilter(
      'Only transactions this principal sends, receives a token transfer in, deploys or calls; not with `sender_address` or `recipient_address`',
    ),
  ),
  order_by: Type.Enum(['age', 'size', 'fee'], {
    default: 'age',
    description: 'Sort by receipt time (`age`), raw size or fee',
    examples: ['age'],
  }),
  order: Type.Enum(['asc', 'desc'], {
    default: 'desc',
    description: 'Sort direction',
    examples: ['desc'],
  }),
  ...mempoolListFields,
});

const MempoolTransactionPage = Page(MempoolTransaction, {
  title: 'MempoolTransactionPage',
  description:
    'Pending transactions, newest received first by default. Without an address filter, `total` counts the pending transactions (not the unconfirmed microblock ones listed)',
});

export const getMempoolTransactionListRoute = {
  url: '/extended/v1/tx/mempool',
  schema: {
    operationId: 'get_mempool_transaction_list',
    summary: 'Get mempool transactions',
    description: 'Pending transactions, optionally of one principal, ordered by receipt time, size or fee.',
    tags: ['Transactions'],
    querystring: MempoolTxListQuery,
    response: { 200: MempoolTransactionPage, ...errorResponses },
  },
};

const AddressMempoolParams = Type.Object({ principal: PrincipalParam });
const AddressMempoolQuery = Type.Object(mempoolListFields);

export const getAddressMempoolTransactionsRoute = {
  url: '/extended/v1/address/:principal/mempool',
  schema: {
    operationId: 'get_address_mempool_transactions',
    summary: 'Get mempool transactions of a principal',
    description:
      'Pending transactions a principal sends, receives a token transfer in, deploys or calls (sponsoring does not count), newest received first.',
    tags: ['Transactions'],
    params: AddressMempoolParams,
    querystring: AddressMempoolQuery,
    response: { 200: MempoolTransactionPage, ...errorResponses },
  },
};
