import Type, { type Static } from 'typebox';
import { Nullable } from './common.js';

// Transactions as the original API renders them (contract 2.2, 2.3, 2.5, 2.6; docs/upstream.md A.11).
// Variant members (tx type payloads, event kinds, post-condition kinds) are optional properties of one
// object schema, in upstream key order: the serializer writes the ones present, in that order.

const ClarityValue = Type.Object({ hex: Type.String(), repr: Type.String() });

const PostCondition = Type.Object(
  {
    principal: Type.Object({
      type_id: Type.String({ description: 'principal_origin | principal_standard | principal_contract' }),
      address: Type.Optional(Type.String()),
      contract_name: Type.Optional(Type.String()),
    }),
    condition_code: Type.String({ description: 'e.g. sent_equal_to, sent, not_sent' }),
    amount: Type.Optional(Type.String()),
    type: Type.String({ description: 'stx | fungible | non_fungible' }),
    asset_value: Type.Optional(ClarityValue),
    asset: Type.Optional(
      Type.Object({
        asset_name: Type.String(),
        contract_address: Type.String(),
        contract_name: Type.String(),
      }),
    ),
  },
  { title: 'PostCondition' },
);

export const TransactionEvent = Type.Object(
  {
    event_index: Type.Integer(),
    event_type: Type.String({
      description:
        'smart_contract_log | stx_lock | stx_asset | fungible_token_asset | non_fungible_token_asset',
    }),
    tx_id: Type.String(),
    contract_log: Type.Optional(
      Type.Object({ contract_id: Type.String(), topic: Type.String(), value: ClarityValue }),
    ),
    stx_lock_event: Type.Optional(
      Type.Object({
        locked_amount: Type.String(),
        unlock_height: Type.Integer(),
        locked_address: Type.String(),
      }),
    ),
    asset: Type.Optional(
      Type.Object({
        asset_event_type: Type.String({ description: 'transfer | mint | burn' }),
        asset_id: Type.Optional(Type.String()),
        sender: Type.String(),
        recipient: Type.String(),
        amount: Type.Optional(Type.String()),
        value: Type.Optional(ClarityValue),
        memo: Type.Optional(Type.String()),
      }),
    ),
  },
  { title: 'TransactionEvent' },
);
export type TransactionEvent = Static<typeof TransactionEvent>;

const FunctionArg = Type.Object({
  hex: Type.String(),
  repr: Type.String(),
  name: Type.String(),
  type: Type.String(),
});

/** The type-specific member of a transaction (exactly one is present, named after `tx_type`). */
const typePayloads = {
  token_transfer: Type.Optional(
    Type.Object({ recipient_address: Type.String(), amount: Type.String(), memo: Type.String() }),
  ),
  smart_contract: Type.Optional(
    Type.Object({
      clarity_version: Nullable(Type.Integer()),
      contract_id: Type.String(),
      source_code: Type.String(),
    }),
  ),
  contract_call: Type.Optional(
    Type.Object({
      contract_id: Type.String(),
      function_name: Type.String(),
      function_signature: Type.String(),
      function_args: Type.Optional(Type.Array(FunctionArg)),
    }),
  ),
  poison_microblock: Type.Optional(
    Type.Object({ microblock_header_1: Type.String(), microblock_header_2: Type.String() }),
  ),
  coinbase_payload: Type.Optional(
    Type.Object({
      data: Type.String(),
      alt_recipient: Type.Optional(Nullable(Type.String())),
      vrf_proof: Type.Optional(Type.String()),
    }),
  ),
  tenure_change_payload: Type.Optional(
    Type.Object({
      tenure_consensus_hash: Type.String(),
      prev_tenure_consensus_hash: Type.String(),
      burn_view_consensus_hash: Type.String(),
      previous_tenure_end: Type.String(),
      previous_tenure_blocks: Type.Integer(),
      cause: Type.String(),
      pubkey_hash: Type.String(),
    }),
  ),
};

/** A sponsored transaction's sponsor: upstream writes these last, after the type-specific member. */
const sponsorFields = {
  sponsor_nonce: Type.Optional(Type.Integer()),
  sponsor_address: Type.Optional(Type.String()),
};

const baseFields = {
  tx_id: Type.String(),
  nonce: Type.Integer(),
  fee_rate: Type.String({ description: 'fee in micro-STX (the sponsor’s fee when sponsored)' }),
  sender_address: Type.String(),
  sponsored: Type.Boolean(),
  post_condition_mode: Type.String({ description: 'allow | deny | originator' }),
  post_conditions: Type.Array(PostCondition),
  anchor_mode: Type.String({ description: 'on_chain_only | off_chain_only | any' }),
};

export const Transaction = Type.Object(
  {
    ...baseFields,
    block_hash: Type.String(),
    block_height: Type.Integer(),
    block_time: Type.Integer(),
    block_time_iso: Type.String(),
    burn_block_time: Type.Integer(),
    burn_block_height: Type.Integer(),
    burn_block_time_iso: Type.String(),
    parent_burn_block_time: Type.Integer(),
    parent_burn_block_time_iso: Type.String(),
    canonical: Type.Boolean(),
    tx_index: Type.Integer(),
    tx_status: Type.String({
      description: 'success | abort_by_response | abort_by_post_condition | problematic_skipped',
    }),
    tx_result: ClarityValue,
    event_count: Type.Integer(),
    parent_block_hash: Type.String(),
    is_unanchored: Type.Boolean(),
    microblock_hash: Type.String(),
    microblock_sequence: Type.Integer(),
    microblock_canonical: Type.Boolean(),
    execution_cost_read_count: Type.Integer(),
    execution_cost_read_length: Type.Integer(),
    execution_cost_runtime: Type.Integer(),
    execution_cost_write_count: Type.Integer(),
    execution_cost_write_length: Type.Integer(),
    vm_error: Nullable(Type.String()),
    events: Type.Array(TransactionEvent),
    tx_type: Type.String({
      description:
        'token_transfer | smart_contract | contract_call | poison_microblock | coinbase | tenure_change',
    }),
    ...typePayloads,
    ...sponsorFields,
  },
  { title: 'Transaction', description: 'A mined transaction' },
);
export type Transaction = Static<typeof Transaction>;

export const MempoolTransaction = Type.Object(
  {
    ...baseFields,
    tx_status: Type.String({
      description:
        'pending | dropped_replace_by_fee | dropped_replace_across_fork | dropped_too_expensive | dropped_stale_garbage_collect | dropped_problematic',
    }),
    replaced_by_tx_id: Nullable(Type.String()),
    receipt_time: Type.Integer(),
    receipt_time_iso: Type.String(),
    tx_type: Type.String(),
    ...typePayloads,
    ...sponsorFields,
  },
  { title: 'MempoolTransaction', description: 'A pending or dropped mempool transaction' },
);
export type MempoolTransaction = Static<typeof MempoolTransaction>;

/** The `result` of an id `/tx/multiple` did not find. */
const TxNotFound = Type.Object({ tx_id: Type.String() }, { title: 'TransactionNotFound' });

/** `GET /extended/v1/tx/multiple`: each requested id → whether found, and the tx. */
export const TransactionList = Type.Record(
  Type.String(),
  Type.Object({
    found: Type.Boolean(),
    result: Type.Union([Transaction, MempoolTransaction, TxNotFound]),
  }),
  { title: 'TransactionList', description: 'Each requested id → whether found, and the tx' },
);
export type TransactionList = Static<typeof TransactionList>;
