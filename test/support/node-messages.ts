// The members of a stacks-node's `/new_block` message that tests read back from a recorded or generated
// stream (a 3.x node's; a 2.x node's lack the Nakamoto ones). Any other member is there too, untyped.

export interface NewBlockMessage {
  block_hash: string;
  block_height: number;
  /** null before Nakamoto */
  block_time: number | null;
  index_block_hash: string;
  parent_index_block_hash: string;
  burn_block_hash: string;
  burn_block_height: number;
  burn_block_time: number;
  consensus_hash: string;
  miner_txid: string;
  tenure_height: number;
  signer_bitvec: string | null;
  /** Nakamoto blocks only */
  signer_signature?: string[];
  signer_signature_hash?: string;
  miner_signature?: string;
  transactions: { txid: string; raw_tx: string; tx_index: number; microblock_hash: string | null }[];
  events: unknown[];
  matured_miner_rewards: {
    recipient: string;
    coinbase_amount: string;
    tx_fees_anchored: string;
    tx_fees_streamed_confirmed: string;
    tx_fees_streamed_produced: string;
  }[];
  [member: string]: unknown;
}
