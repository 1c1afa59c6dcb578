import type { SignRequest } from './signer.js';

// A transaction as the generator plans it: what to sign, and what the node would report after running it
// (status, result, events). The tx id and raw bytes are filled in once the signer pool has signed it.

type TxStatus = 'success' | 'abort_by_response';

export interface EventDraft {
  type:
    | 'stx_transfer_event'
    | 'stx_mint_event'
    | 'stx_lock_event'
    | 'ft_transfer_event'
    | 'ft_mint_event'
    | 'ft_burn_event'
    | 'nft_transfer_event'
    | 'nft_mint_event'
    | 'nft_burn_event'
    | 'contract_event';
  body: Record<string, string>;
}

export interface ExecutionCost {
  read_count: number;
  read_length: number;
  runtime: number;
  write_count: number;
  write_length: number;
}

export type TxKind =
  | 'genesis'
  | 'coinbase'
  | 'nakamoto_coinbase'
  | 'tenure_change'
  | 'stx_transfer'
  | 'contract_deploy'
  | 'ft_transfer'
  | 'ft_mint'
  | 'ft_burn'
  | 'nft_mint'
  | 'nft_transfer'
  | 'nft_burn'
  | 'stack_stx';

export interface TxDraft {
  kind: TxKind;
  /**
   * null for the unsigned genesis tx, whose raw bytes are given, and for a tenure change, signed as its
   * block is written (it names the block before it)
   */
  request: SignRequest | null;
  senderAddress: string;
  /** the sponsor's address, when sponsored */
  sponsorAddress?: string;
  nonce: number;
  /** fee paid (by the sponsor when sponsored) */
  fee: number;
  status: TxStatus;
  rawResult: string;
  events: EventDraft[];
  contractAbi: object | null;
  cost: ExecutionCost;
  /** set once signed */
  txid: string;
  rawTx: string;
}

/** The API's `tx_type` of each kind. */
export const TX_TYPES: Record<TxKind, string> = {
  genesis: 'token_transfer',
  coinbase: 'coinbase',
  nakamoto_coinbase: 'coinbase',
  tenure_change: 'tenure_change',
  stx_transfer: 'token_transfer',
  contract_deploy: 'smart_contract',
  ft_transfer: 'contract_call',
  ft_mint: 'contract_call',
  ft_burn: 'contract_call',
  nft_mint: 'contract_call',
  nft_transfer: 'contract_call',
  nft_burn: 'contract_call',
  stack_stx: 'contract_call',
};

export function newDraft(fields: Omit<TxDraft, 'txid' | 'rawTx'>): TxDraft {
  return { ...fields, txid: '', rawTx: '' };
}
