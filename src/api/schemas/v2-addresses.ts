import Type from 'typebox';
import { errorResponses } from './common.js';
import { CursorPage, Page, pageQuery } from './lists.js';
import { AccountTxIdParam, PrincipalParam, TxQuery } from './params.js';
import { Transaction } from './transactions.js';

// GET /extended/v2/addresses/{address}/transactions and its /{tx_id}/events (docs/upstream.md C.9, C.10).
// Upstream names the principal of these paths `address` (a contract id works too).

const eventCounts = Type.Object({
  transfer: Type.Integer(),
  mint: Type.Integer(),
  burn: Type.Integer(),
});

const AddressTransaction = Type.Object(
  {
    tx: Transaction,
    stx_sent: Type.String({
      description:
        'STX it sent in the transaction’s events, plus the fee when it paid the fee (as sender, or as sponsor)',
    }),
    stx_received: Type.String({ description: 'STX it received in the transaction’s events' }),
    events: Type.Object(
      { stx: eventCounts, ft: eventCounts, nft: eventCounts },
      { description: 'Counts of the transaction’s STX, FT and NFT events it sent or received, per kind' },
    ),
  },
  { title: 'AddressTransaction', description: 'A transaction of a principal, and its part in it' },
);

const AddressTransactionsParams = Type.Object({ address: PrincipalParam });

const AddressTransactionsQuery = Type.Object({
  ...pageQuery('transaction', 'Transactions'),
  exclude_function_args: TxQuery.exclude_function_args,
});

const AddressTransactions = CursorPage(
  AddressTransaction,
  {
    title: 'AddressTransactions',
    description:
      'Canonical transactions a principal sent, sponsored, received a token transfer in, called or deployed, or that hold an STX, FT or NFT event it sent or received; newest first',
  },
  {
    next: 'Position of the item `limit` before the page’s first (the newer page’s start): `<index_block_hash>:<microblock_sequence>:<tx_index>`; null when there is none',
    prev: 'Position of the item `limit` after the page’s first (the older page’s start); null when there is none',
    cursor: 'Position of the page’s first item; null on an empty page',
  },
);

export const getAddressTransactionsRoute = {
  url: '/extended/v2/addresses/:address/transactions',
  schema: {
    operationId: 'get_address_transactions',
    summary: 'Get address transactions',
    description:
      'Transactions of an address or contract, newest first, each with the STX it sent and received and counts of its STX, FT and NFT events.',
    tags: ['Transactions'],
    params: AddressTransactionsParams,
    querystring: AddressTransactionsQuery,
    response: { 200: AddressTransactions, ...errorResponses },
  },
};

/** One event; its `data` members are those of its kind, in this order (a missing party is left out). */
const AddressTransactionEvent = Type.Object(
  {
    type: Type.String({ description: 'stx | ft | nft' }),
    event_index: Type.Integer(),
    data: Type.Object({
      type: Type.String({ description: 'transfer | mint | burn' }),
      amount: Type.Optional(Type.String({ description: 'stx and ft' })),
      asset_identifier: Type.Optional(Type.String({ description: 'ft and nft' })),
      value: Type.Optional(
        Type.Object({ hex: Type.String(), repr: Type.String() }, { description: 'nft: the token' }),
      ),
      sender: Type.Optional(Type.String({ description: 'absent for a mint' })),
      recipient: Type.Optional(Type.String({ description: 'absent for a burn' })),
    }),
  },
  { title: 'AddressTransactionEvent', description: 'An STX, FT or NFT event a principal takes part in' },
);

const AddressTransactionEventsParams = Type.Object({
  address: PrincipalParam,
  tx_id: AccountTxIdParam,
});

const AddressTransactionEventsQuery = Type.Object(pageQuery('transaction', 'Events'));

const AddressTransactionEvents = Page(AddressTransactionEvent, {
  title: 'AddressTransactionEvents',
  description:
    'The canonical STX, FT and NFT events of a transaction that a principal sent or received, by event index',
});

/** A tx id stored nowhere: 404 `Transaction not found`; a tx without such events: 200, `total: 0`. */
export const getAddressTransactionEventsRoute = {
  url: '/extended/v2/addresses/:address/transactions/:tx_id/events',
  schema: {
    operationId: 'get_address_transaction_events',
    summary: 'Get events of an address transaction',
    description:
      'The STX, FT and NFT events of one transaction that an address or contract sent or received.',
    tags: ['Transactions'],
    params: AddressTransactionEventsParams,
    querystring: AddressTransactionEventsQuery,
    response: { 200: AddressTransactionEvents, ...errorResponses },
  },
};
