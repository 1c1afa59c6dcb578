import type { Logger } from 'pino';
import type { ChainRows, MempoolTxRow } from '../store/schema/rows.js';
import type { EncodedChainRows } from '../store/write/blocks.js';
import type { SkippedEvents } from './chain-rows.js';

/**
 * A block's rows decoded before its database transaction (`Ingestor.prepare`), as if the block were
 * canonical, or the error decoding raised (thrown where decoding would otherwise have run).
 */
export interface DecodedBlock {
  payload: unknown;
  rows?: ChainRows;
  /** the statements' literals of `rows`, built ahead too (`encodeChainRows`) */
  encoded?: EncodedChainRows;
  /** event types the index does not keep, counted while decoding (logged when the block is applied) */
  skipped?: SkippedEvents;
  error?: unknown;
}

/** A `/new_mempool_tx` message's rows decoded before its transaction (`decodeMempoolTxs`). */
export interface DecodedMempoolTxs {
  payload: unknown;
  rows: MempoolTxRow[];
  /** the raw txs the codec could not decode, left out */
  undecodable: { tx_id: string; reason: string }[];
}

/** What every message handler needs besides the payload. */
export interface ApplyContext {
  /** When the message was received (unix seconds): the live clock, or the recorded time on replay. */
  receivedAt: number;
  isMainnet: boolean;
  logger: Logger;
  /** the block's rows, when decoded ahead */
  decoded?: DecodedBlock;
  /** a mempool message's rows, when decoded ahead */
  decodedMempoolTxs?: DecodedMempoolTxs;
  /** the message's content hash: its raw-log row (a block keeps it, to compare a later copy with) */
  contentHash: string;
  /**
   * Test switch (test/ingest/block-paths.test.ts): what follows a new block's rows (principal ordinals,
   * balance contributions, mempool pruning) is computed from the rows read back, as for a reorg, instead of
   * from the rows in hand. Both must give the same index; the test proves it on generated chains.
   */
  readBackRows?: boolean;
  /**
   * Called (at most once) when the message's last statements are sent and only their answers and the
   * commit remain: the caller may use the CPU then (a replay prepares the next message) while the database
   * works. A handler that never calls it is done when its transaction is.
   */
  writesSent?: () => void;
}
