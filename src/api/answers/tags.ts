import { hash } from 'node:crypto';
import { cachedChainState, type ChainState } from '../../store/read/chain-state.js';
import type { Store } from '../../store/store.js';
import type { StateOfAnswers } from '../cache/answer-cache.js';

// ETags (what version of a resource an answer is) and the chain state the cached copies of answers depend on.
// A tag derived from cheap chain state is known before any read, so a client holding it gets its 304 for no
// query; a tag naming the rows read (a tx's) is known once they are read.

/** The chain tip and its unconfirmed microblock stream: what decides which mined rows are visible. */
const tipAndMicroblock = (state: ChainState) => `${state.index_block_hash}:${state.microblock_hash || '0x'}`;

/**
 * The tag of answers that change with the chain tip and the unconfirmed microblock stream (and, `withMempool`,
 * with the mempool): the address routes. Null before the first block.
 */
export function chainTag(state: ChainState, options: { withMempool: boolean }): string | null {
  if (!state.index_block_hash) return null;
  return options.withMempool
    ? `${tipAndMicroblock(state)}:${state.mempool_version}`
    : tipAndMicroblock(state);
}

/**
 * The chain tag of answers read at the tip (null before the first block: untagged), and the tip's height they
 * are read at: the address routes'.
 */
export async function chainTagAtTip(store: Store, withMempool: boolean) {
  const chain = await cachedChainState(store);
  return { tag: chainTag(chain, { withMempool }), tip: chain.block_height };
}

/** The upstream tag of answers that change with the tip: its microblock, else its index block hash. */
export function tipTag(state: ChainState): string | null {
  return state.block_height > 0 ? state.microblock_hash || state.index_block_hash : null;
}

/**
 * The tag of a block named by height, hash (lower-case, 0x-prefixed) or `latest`: valid while the tip stays
 * (what a height or `latest` names, and whether the block of a hash is canonical, change only with the tip).
 */
export const blockTag = (tip: string, name: number | string) => `${tip}:${String(name)}`;

/** The tag of answers made of several versioned parts (the transactions of a lookup). */
export function digestTag(parts: string[]): string {
  return hash('sha256', parts.join('\n'), 'hex');
}

/**
 * The state of answers read from mined rows (and, those that show it, from the mempool): the tip and its
 * microblock (what decides which mined rows are visible) as the generation, and the mempool version. Null
 * before the first block.
 */
export function tipState(store: Store): StateOfAnswers {
  return {
    async read() {
      const state = await cachedChainState(store);
      if (!state.index_block_hash) return null;
      return { generation: tipAndMicroblock(state), mempool: String(state.mempool_version) };
    },
    invalidatedBy: 'a new tip or microblock (a new block, a reorg, a microblock)',
  };
}

/**
 * The state of block answers: the tip's block alone (a block's answer does not show the microblock stream).
 * Null before the first block.
 */
export function blockTipState(store: Store): StateOfAnswers {
  return {
    async read() {
      const state = await cachedChainState(store);
      if (!state.index_block_hash) return null;
      return { generation: state.index_block_hash, mempool: String(state.mempool_version) };
    },
    invalidatedBy: 'a new tip block (a new block, a reorg)',
  };
}
