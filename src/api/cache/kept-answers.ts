import type { FastifyReply, FastifyRequest, onSendHookHandler, preHandlerAsyncHookHandler } from 'fastify';
import { clientHasVersion, sendNotModified } from './etag.js';

// Answers kept by their ETag. An ETag says "same tag, same request => same body" (that is what lets a client's
// If-None-Match be answered 304 without reading anything), so the body sent once under a tag can be sent
// again to any client asking the same URL under the same tag, without reading or rendering anything. For the
// large account pages this is most of the cost: a 94 KB transactions_with_transfers page cost ~0.9 ms of API
// CPU and ~0.25 ms of PostgreSQL to build (bench/RESULTS.md, "Read-side misses"), while sending a ready
// Buffer of that size costs what a bare route sending a constant does.
//
// Never from another tip: an entry is found only under the tag it was made with; the first request that
// computes another tag (the chain state changed: local ingest dropped the cached state, another process's
// NOTIFY did, or the state's 100 ms TTL re-read found a new tip or mempool version) drops every entry. A body
// is kept only if the tag is unchanged once it is built: a read that raced with ingest (the reads ran on the
// new state, the tag was the old one) is sent as it is but not kept. So a kept answer is never staler than the
// ETag it is sent under: both last until this process learns of the change (docs/deploy.md, "How stale a
// reader is").
//
// Bound: `maxBytes` of bodies per route (8 MB by default: ~85 of the largest 94 KB pages, or thousands of
// small answers), the oldest kept answer leaving first; an answer larger than a quarter of the bound is never
// kept.

const DEFAULT_MAX_BYTES = 8 * 1024 * 1024;

/** URL → body, all made under one tag. */
export class KeptAnswers {
  private tag: string | undefined;
  private readonly entries = new Map<string, Buffer>();
  private keptBytes = 0;

  constructor(readonly maxBytes = DEFAULT_MAX_BYTES) {}

  /** The body kept for `key` under `tag`; a new tag drops everything kept under the previous one. */
  get(tag: string, key: string): Buffer | undefined {
    if (tag !== this.tag) {
      this.clear();
      this.tag = tag;
      return undefined;
    }
    return this.entries.get(key);
  }

  /** Keeps `body` for `key` under `tag` (ignored when `tag` is no longer the current one, or too large). */
  set(tag: string, key: string, body: Buffer): void {
    if (tag !== this.tag || body.length > this.maxBytes / 4) return;
    const previous = this.entries.get(key);
    if (previous) {
      this.entries.delete(key);
      this.keptBytes -= previous.length;
    }
    while (this.keptBytes + body.length > this.maxBytes) {
      const oldest = this.entries.entries().next();
      if (oldest.done) break;
      this.entries.delete(oldest.value[0]);
      this.keptBytes -= oldest.value[1].length;
    }
    this.entries.set(key, body);
    this.keptBytes += body.length;
  }

  private clear(): void {
    this.entries.clear();
    this.keptBytes = 0;
  }

  get size(): number {
    return this.entries.size;
  }

  get bytes(): number {
    return this.keptBytes;
  }
}

/** The tag a request was answered under, for the requests whose fresh body is to be kept. */
const pending = new WeakMap<FastifyRequest, { tag: string; generation: string }>();

/**
 * The hooks of a route whose answers are kept by their ETag (`computeTag`: the request's ETag, from cheap chain
 * state; null → no tag, nothing kept). The preHandler answers 304 when the client holds the version, else
 * the kept body when there is one (the handler never runs); the onSend hook keeps a fresh 200 body when the
 * tag is still the current one.
 *
 * `generationOf`: what all the route's kept answers share, when that is not the ETag itself. For routes whose
 * ETag names one object at the tip (a block by height: tip + height), the tip: without it every request for
 * another height would be a "new tag" and drop what the others kept. For a route whose ETag leaves out part of
 * what the answer depends on (contract statuses: tagged by the tip as upstream does, yet a pending deployment
 * shows in them), the ETag plus that part; for one whose answer is built from a snapshot the tag does not name
 * alone (the mempool aggregates: their ages move with the tip), the snapshot the request was answered from, hence
 * the request. The body is still only answered under the same request ETag it was made with: the key is the URL
 * plus that ETag.
 */
export function keptByEtag(
  computeTag: (request: FastifyRequest) => Promise<string | null>,
  options: {
    /** the bound of this route's kept bodies (DEFAULT_MAX_BYTES when not given) */
    maxBytes?: number;
    generationOf?: (tag: string, request: FastifyRequest) => string | Promise<string>;
  } = {},
): { preHandler: preHandlerAsyncHookHandler; onSend: onSendHookHandler } {
  const answers = new KeptAnswers(options.maxBytes);
  const generationOf = options.generationOf ?? ((tag: string) => tag);
  const keyOf = (request: FastifyRequest, tag: string, generation: string) =>
    generation === tag ? request.url : `${request.url}\n${tag}`;
  const preHandler = async function keptAnswerHandler(request: FastifyRequest, reply: FastifyReply) {
    const tag = await computeTag(request);
    if (tag === null) return;
    if (clientHasVersion(request, reply, tag)) {
      await sendNotModified(reply);
      return reply;
    }
    if (request.method !== 'GET') return;
    const generation = await generationOf(tag, request);
    const body = answers.get(generation, keyOf(request, tag, generation));
    if (body) {
      await reply.type('application/json; charset=utf-8').send(body);
      return reply;
    }
    pending.set(request, { tag, generation });
  };
  const onSend: onSendHookHandler = async (request, reply, payload) => {
    const made = pending.get(request);
    if (made === undefined) return payload;
    pending.delete(request);
    const { tag, generation } = made;
    if (reply.statusCode !== 200 || (typeof payload !== 'string' && !Buffer.isBuffer(payload)))
      return payload;
    // the tag the answer went out under (a handler may name a more precise one: `latest` found a newer tip)
    if (reply.getHeader('etag') !== `"${tag}"` || (await computeTag(request)) !== tag) return payload;
    if ((await generationOf(tag, request)) !== generation) return payload;
    const body = typeof payload === 'string' ? Buffer.from(payload) : payload;
    answers.set(generation, keyOf(request, tag, generation), body);
    return body;
  };
  return { preHandler, onSend };
}
