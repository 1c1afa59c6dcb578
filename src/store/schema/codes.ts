// The small-integer codes the schema stores (migrations/001_schema.sql), by name. Every module that writes
// or reads a code takes it from here.

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
export const AnchorMode = { on_chain_only: 1, off_chain_only: 2, any: 3 } as const;
export const PostConditionMode = { allow: 1, deny: 2, originator: 3 } as const;

/** `microblock_sequence` of anchored txs: sorts after every microblock tx of the block. */
export const ANCHORED_SEQUENCE = 2147483647;
