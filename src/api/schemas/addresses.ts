import Type, { type Static } from 'typebox';
import { Transaction } from './transactions.js';

// Accounts: balances (contract 2.1), transactions with transfers (2.4, 2.12); docs/upstream.md A.1, A.8, A.9.

export const StxBalance = Type.Object({
  balance: Type.String({ description: 'received − sent − fees + miner rewards (locked STX included)' }),
  total_miner_rewards_received: Type.String(),
  lock_tx_id: Type.String({ description: '"" when nothing is locked' }),
  locked: Type.String(),
  lock_height: Type.Integer(),
  burnchain_lock_height: Type.Integer(),
  burnchain_unlock_height: Type.Integer(),
  estimated_balance: Type.Optional(
    Type.String({ description: 'balance + pending inbound − pending outbound (without until_block)' }),
  ),
  pending_balance_inbound: Type.Optional(Type.String()),
  pending_balance_outbound: Type.Optional(Type.String()),
  total_sent: Type.String(),
  total_received: Type.String(),
  total_fees_sent: Type.String({
    description: 'fees of every tx it paid for, failed and sponsored ones too',
  }),
});

const FtBalance = Type.Object({
  balance: Type.String({ description: 'received − sent; may be negative' }),
  total_sent: Type.String(),
  total_received: Type.String(),
});

const NftBalance = Type.Object({
  count: Type.String({ description: 'tokens received − sent (event counts); may be negative' }),
  total_sent: Type.String(),
  total_received: Type.String(),
});

export const TokenOfferingLocked = Type.Object({
  total_locked: Type.String(),
  total_unlocked: Type.String(),
  unlock_schedule: Type.Array(Type.Object({ amount: Type.String(), block_height: Type.Integer() })),
});

export const AddressBalances = Type.Object(
  {
    stx: StxBalance,
    fungible_tokens: Type.Record(Type.String(), FtBalance),
    non_fungible_tokens: Type.Record(Type.String(), NftBalance),
    token_offering_locked: Type.Optional(TokenOfferingLocked),
  },
  { title: 'AddressBalances', description: 'STX, fungible and non-fungible token balances' },
);
export type AddressBalances = Static<typeof AddressBalances>;

const StxTransfer = Type.Object({
  amount: Type.String(),
  sender: Type.String({ description: '"" for a mint' }),
  recipient: Type.String({ description: '"" for a burn' }),
});

const FtTransfer = Type.Object({
  amount: Type.String(),
  asset_identifier: Type.String(),
  sender: Type.String(),
  recipient: Type.String(),
});

const NftTransfer = Type.Object({
  value: Type.Object({ hex: Type.String(), repr: Type.String() }),
  asset_identifier: Type.String(),
  sender: Type.String(),
  recipient: Type.String(),
});

const transferFields = {
  stx_sent: Type.String({ description: 'fee (when it is the sender) + STX it sent in events' }),
  stx_received: Type.String(),
  stx_transfers: Type.Array(StxTransfer),
  ft_transfers: Type.Array(FtTransfer),
  nft_transfers: Type.Array(NftTransfer),
};

/** The members of a TransactionWithTransfers after `tx` (serialized apart from an already rendered tx). */
export const TransfersOfTx = Type.Object(transferFields);
export type TransfersOfTx = Static<typeof TransfersOfTx>;

export const TransactionWithTransfers = Type.Object(
  {
    tx: Transaction,
    ...transferFields,
  },
  {
    title: 'TransactionWithTransfers',
    description: 'A transaction and the transfers a principal takes part in',
  },
);
export type TransactionWithTransfers = Static<typeof TransactionWithTransfers>;

export const TransactionsWithTransfersPage = Type.Object(
  {
    limit: Type.Integer(),
    offset: Type.Integer(),
    total: Type.Integer(),
    results: Type.Array(TransactionWithTransfers),
  },
  { title: 'TransactionsWithTransfersPage', description: 'A page of an account’s transactions (2.12)' },
);
export type TransactionsWithTransfersPage = Static<typeof TransactionsWithTransfersPage>;
