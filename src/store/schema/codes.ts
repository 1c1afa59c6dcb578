// The small-integer codes the schema stores (migrations/001_schema.sql), both ways: each table maps a name to
// its code (what ingest writes and SQL builders compare with), and its `...Name` function maps a stored code
// back to the name the API shows. Every module that writes, compares or renders a code takes it from here.

/** Transaction payload types: the wire's payload type byte (`@stacks/transactions` PayloadType; tested). */
export const TxTypeId = {
  token_transfer: 0,
  smart_contract: 1,
  contract_call: 2,
  poison_microblock: 3,
  coinbase: 4,
  coinbase_to_alt_recipient: 5,
  versioned_smart_contract: 6,
  tenure_change: 7,
  nakamoto_coinbase: 8,
} as const;

/** The type ids of contract deployments: a Clarity 1 `smart_contract` and a versioned one. */
export const DEPLOY_TYPE_IDS = [TxTypeId.smart_contract, TxTypeId.versioned_smart_contract] as const;

export const EventKind = { stxAsset: 1, ftAsset: 2, nftAsset: 3, stxLock: 4, contractLog: 5 } as const;
export const AssetEventType = { transfer: 1, mint: 2, burn: 3 } as const;
export const TxStatus = {
  success: 1,
  abort_by_response: -1,
  abort_by_post_condition: -2,
  problematic_skipped: -3,
} as const;
export const MempoolStatus = {
  pending: 0,
  dropped_replace_by_fee: -10,
  dropped_replace_across_fork: -11,
  dropped_too_expensive: -12,
  dropped_stale_garbage_collect: -13,
  dropped_api_garbage_collect: -14,
  dropped_problematic: -15,
} as const;
/** Wire codes (`@stacks/transactions` AnchorMode and PostConditionMode; tested). */
export const AnchorMode = { on_chain_only: 1, off_chain_only: 2, any: 3 } as const;
export const PostConditionMode = { allow: 1, deny: 2, originator: 3 } as const;

/** `microblock_sequence` of anchored txs: sorts after every microblock tx of the block. */
export const ANCHORED_SEQUENCE = 2147483647;

/**
 * The reverse of a code table: code → name, the table's own name unless `shown` gives the API's (several
 * codes may show as one name).
 */
function namesOf<T extends Record<string, number>>(
  table: T,
  shown: Partial<Record<keyof T, string>> = {},
): ReadonlyMap<number, string> {
  return new Map(Object.entries(table).map(([name, code]) => [code, shown[name as keyof T] ?? name]));
}

const txTypeNames = namesOf(TxTypeId, {
  coinbase_to_alt_recipient: 'coinbase',
  versioned_smart_contract: 'smart_contract',
  nakamoto_coinbase: 'coinbase',
});
const eventKindNames = namesOf(EventKind, {
  stxAsset: 'stx_asset',
  ftAsset: 'fungible_token_asset',
  nftAsset: 'non_fungible_token_asset',
  stxLock: 'stx_lock',
  contractLog: 'smart_contract_log',
});
const assetEventTypeNames = namesOf(AssetEventType);
const txStatusNames = namesOf(TxStatus);
// The original API shows its own garbage collection as the node's (docs/upstream.md A.11).
const mempoolStatusNames = namesOf(MempoolStatus, {
  dropped_api_garbage_collect: 'dropped_stale_garbage_collect',
});
const anchorModeNames = namesOf(AnchorMode);
const postConditionModeNames = namesOf(PostConditionMode);

/** The API's `tx_type` (coinbases show as `coinbase`, versioned deployments as `smart_contract`). */
export const txTypeName = (typeId: number): string => txTypeNames.get(typeId) ?? 'unknown';
/** The API's `event_type` of an event kind. */
export const eventTypeName = (kind: number): string => eventKindNames.get(kind) ?? 'unknown';
export const assetEventTypeName = (code: number): string => assetEventTypeNames.get(code) ?? 'unknown';
export const txStatusName = (status: number): string => txStatusNames.get(status) ?? 'unknown';
/** A mempool row's `tx_status`: a code the table lacks shows as pending, as upstream's does. */
export const mempoolStatusName = (status: number): string => mempoolStatusNames.get(status) ?? 'pending';
export const anchorModeName = (code: number): string => anchorModeNames.get(code) ?? 'unknown';
export const postConditionModeName = (code: number): string => postConditionModeNames.get(code) ?? 'unknown';

/**
 * The API's transaction types (`tx_type`, and the `type` filter of the transaction list), each with the type
 * ids it covers (every coinbase form, both kinds of deploy), in the order of their first type id.
 */
export const TX_TYPES: ReadonlyMap<string, readonly number[]> = (() => {
  const types = new Map<string, number[]>();
  for (const id of Object.values(TxTypeId).sort((a, b) => a - b)) {
    const name = txTypeName(id);
    types.set(name, [...(types.get(name) ?? []), id]);
  }
  return types;
})();
