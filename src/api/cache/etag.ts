import { hash } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { cachedChainState, type ChainState } from '../../store/read/chain-state.js';
import type { Store } from '../../store/store.js';

// ETags: how a tag is compared and answered (304), and what each route's tag is derived from.

const REVALIDATE = 'public, no-cache, must-revalidate';

/** The entity tags listed in If-None-Match (quotes and weak prefixes removed). */
function parseIfNoneMatch(header: string | undefined): string[] {
  if (!header) return [];
  return header
    .split(',')
    .map((tag) =>
      tag
        .trim()
        .replace(/^W\//, '')
        .replace(/^"(.*)"$/, '$1'),
    )
    .filter((tag) => tag.length > 0);
}

/**
 * Tags the answer with an ETag and tells whether the client already holds that version (the caller then
 * answers 304 with no body). For routes whose tag comes from the row the handler reads anyway, so the tag
 * costs no extra query.
 */
export function clientHasVersion(request: FastifyRequest, reply: FastifyReply, tag: string): boolean {
  reply.header('cache-control', REVALIDATE);
  const ifNoneMatch = request.headers['if-none-match'];
  if (ifNoneMatch !== undefined && parseIfNoneMatch(ifNoneMatch).includes(tag)) return true;
  reply.header('etag', `"${tag}"`);
  return false;
}

/** The answer when `clientHasVersion`: 304, no body. */
export function sendNotModified(reply: FastifyReply) {
  return reply.code(304).send();
}

/**
 * The tag of answers that change with the chain tip and the unconfirmed microblock stream (and,
 * `withMempool`, with the mempool): the address routes. Null before the first block.
 */
export function chainTag(store: Store, options: { withMempool: boolean }): () => Promise<string | null> {
  return async () => {
    const state = await cachedChainState(store);
    if (!state.index_block_hash) return null;
    const mempool = options.withMempool ? `:${state.mempool_version}` : '';
    return `${tipAndMicroblock(state)}${mempool}`;
  };
}

/** The chain tip and its unconfirmed microblock stream: what decides which mined rows are visible. */
const tipAndMicroblock = (state: ChainState) => `${state.index_block_hash}:${state.microblock_hash || '0x'}`;

/**
 * The chain state of answers kept with their own tags (`keptWithOwnTags`): the tip and its microblock (what
 * decides which mined rows are visible) as the generation, and the mempool version (what decides a mempool tx's
 * state, and whether an id not mined is found at all). Null before the first block.
 */
export function tipAndMempool(store: Store): () => Promise<{ generation: string; mempool: string } | null> {
  return async () => {
    const state = await cachedChainState(store);
    if (!state.index_block_hash) return null;
    return { generation: tipAndMicroblock(state), mempool: String(state.mempool_version) };
  };
}

/** The upstream tag of answers that change with the tip: its microblock, else its index block hash. */
export function tipTag(store: Store): () => Promise<string | null> {
  return async () => {
    const state = await cachedChainState(store);
    return state.block_height > 0 ? state.microblock_hash || state.index_block_hash : null;
  };
}

/**
 * The ETag of a block named by height, hash (lower-case, 0x-prefixed) or `latest`: valid while the tip stays
 * (what a height or `latest` names, and whether the block of a hash is canonical, change only with the tip).
 */
export const blockTag = (tip: string, name: number | string) => `${tip}:${String(name)}`;

/** The tip a `blockTag` was made at (what all the block tags of one tip share). */
export const tipOfBlockTag = (tag: string) => tag.slice(0, tag.lastIndexOf(':'));

/** The ETag of answers made of several versioned parts (the transactions of a lookup). */
export function digestTag(parts: string[]): string {
  return hash('sha256', parts.join('\n'), 'hex');
}
