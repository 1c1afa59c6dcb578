import type {
  FastifyReply,
  FastifyRequest,
  onRequestHookHandler,
  onSendHookHandler,
  preHandlerAsyncHookHandler,
} from 'fastify';
import {
  cacheMemory,
  ENTRY_BYTES,
  keptBody,
  keptBodyBytes,
  type CacheMember,
  type CacheMemory,
  type KeptBody,
} from './cache-memory.js';
import { clientHasVersion, sendNotModified } from './etag.js';
import { OldestFirst } from './oldest-first.js';

// Answers kept by their ETag. An ETag says "same tag, same request => same body" (that is what lets a client's
// If-None-Match be answered 304 without reading anything), so the body sent once under a tag can be sent
// again to any client asking the same URL under the same tag, without reading or rendering anything. For the
// large account pages this is most of the cost: a 94 KB transactions_with_transfers page cost ~0.9 ms of API
// CPU and ~0.25 ms of PostgreSQL to build (bench finding F-api-kept-answers), while sending a ready
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
// Bound: `maxBytes` per route (8 MB by default: ~85 of the largest 94 KB pages, or thousands of small answers),
// counted by what each entry retains (cache-memory.ts): its body (text when small), plus its
// key (the URL), its own tag and the objects holding them, so that many small answers (a tx: ~2 KB, its URL ~90
// characters and tag 64, ~3.4 KB in all) are counted at what they hold; the oldest kept answer leaves first; an
// answer larger than a quarter of the bound is never kept. Every route's answers also count against the
// process's bound of all caches (CACHE_MAX_MB), which takes from the route holding the most.
//
// Two kinds of route share this store and its rules:
// - `keptByEtag`: the ETag is computed from cheap chain state before the handler runs, one tag for every
//   answer of a state (a tip, a tip and a height): the kept body is found under the request's tag.
// - `keptWithOwnTags`: the ETag names the rows the answer was read from (a tx: where it is mined, or its
//   mempool state), so it is only known once the handler has read them. The kept entry carries the tag it went
//   out with, and is found while the chain state it was made under stays: the tip (block and microblock), and
//   for an answer that depends on the mempool too (`keptAnswerReadsMempool`), the mempool version.

const DEFAULT_MAX_BYTES = 8 * 1024 * 1024;

/** A kept answer: its body, and for routes whose tag is per answer, that tag and what it depends on. */
export interface KeptAnswer {
  body: KeptBody;
  /** the ETag (unquoted) the body went out with, when it is not the request's tag */
  etag?: string;
  /** the mempool version the answer was made under, when the answer depends on the mempool */
  mempool?: string;
}

/**
 * With `keepOnSecondAsk`, an answer is kept only when its key is asked for the second time under a generation:
 * the keys asked once are remembered (the latest `2 * maxBytes / typicalAnswerBytes` of them, two to three times
 * the answers the bound holds: 8,192 for 8 MB of ~2 KB tx answers, which it holds ~2,500 of), so a walk over more distinct URLs than that (a
 * crawler over the history, the bench's cold cases) keeps nothing and evicts nothing: the answers asked again
 * stay, and the walk costs no copy of its bodies. Measured on the small chain's cold tx walk (9,646 ids, more
 * than 8 MB of answers), keeping every miss cost ~8 µs of API CPU a request in this file alone
 * (`bench/profile-http.ts`), plus the garbage collection of 8 MB of bodies turned over every ~0.3 s.
 */
interface KeptAnswersOptions {
  /** the bound of the route's kept answers (DEFAULT_MAX_BYTES when not given) */
  maxBytes?: number;
  /** the bound of all caches this one counts against (the process's when not given) */
  memory?: CacheMemory;
  keepOnSecondAsk?: boolean;
  /** the size of a typical answer of the route, body, key and tag (2 KB when not given) */
  typicalAnswerBytes?: number;
}

/**
 * URL → answer, all made under one generation.
 * @internal exported for its tests
 */
export class KeptAnswers implements CacheMember {
  private generation: string | undefined;
  private readonly entries = new Map<string, KeptAnswer>();
  private keptBytes = 0;
  readonly maxBytes: number;
  /** keys asked once under the generation and not kept (with `keepOnSecondAsk`), oldest first */
  private readonly askedOnce: Set<string> | undefined;
  private readonly maxAskedOnce: number;
  private readonly oldestAskedOnce: OldestFirst<string> | undefined;
  private readonly oldestEntry = new OldestFirst(this.entries, (key) => {
    this.keptBytes -= sizeOf(key, this.entries.get(key)!);
  });

  private readonly memory: CacheMemory;

  constructor(options: KeptAnswersOptions = {}) {
    this.maxBytes = options.maxBytes ?? DEFAULT_MAX_BYTES;
    this.memory = options.memory ?? cacheMemory;
    this.memory.join(this);
    this.askedOnce = options.keepOnSecondAsk ? new Set() : undefined;
    this.oldestAskedOnce = this.askedOnce && new OldestFirst(this.askedOnce);
    this.maxAskedOnce = Math.max(1, Math.floor((2 * this.maxBytes) / (options.typicalAnswerBytes ?? 2048)));
  }

  /**
   * Whether an answer for `key`, made now under `generation`, is to be kept (asked before the body is copied):
   * not under an old generation; with `keepOnSecondAsk`, only on the second ask.
   */
  admits(generation: string, key: string): boolean {
    if (generation !== this.generation) return false;
    if (this.askedOnce === undefined || this.askedOnce.delete(key)) return true;
    this.askedOnce.add(key);
    if (this.askedOnce.size > this.maxAskedOnce) this.oldestAskedOnce?.evict();
    return false;
  }

  /** The answer kept for `key` under `generation`; a new generation drops everything kept under the previous one. */
  get(generation: string, key: string): KeptAnswer | undefined {
    if (generation !== this.generation) {
      this.clear();
      this.generation = generation;
      return undefined;
    }
    return this.entries.get(key);
  }

  /**
   * Keeps `answer` for `key` under `generation` (ignored when that is no longer the current one, or too large),
   * its body as `keptBody` keeps it (text when small, else bytes in a store of their own).
   */
  set(generation: string, key: string, answer: KeptAnswer): void {
    const size = sizeOf(key, answer);
    if (generation !== this.generation || size > this.maxBytes / 4) return;
    const previous = this.entries.get(key);
    if (previous) {
      this.entries.delete(key);
      this.keptBytes -= sizeOf(key, previous);
    }
    while (this.keptBytes + size > this.maxBytes) {
      if (this.oldestEntry.evict() === undefined) break;
    }
    if (!this.memory.makeRoom(size)) return;
    this.entries.set(key, { ...answer, body: keptBody(answer.body) });
    this.keptBytes += size;
  }

  evictOldest(): boolean {
    return this.oldestEntry.evict() !== undefined;
  }

  private clear(): void {
    this.entries.clear();
    this.askedOnce?.clear();
    this.keptBytes = 0;
  }

  get size(): number {
    return this.entries.size;
  }

  get bytes(): number {
    return this.keptBytes;
  }
}

/**
 * What an entry retains: its body (as `keptBody` keeps it), its key, tag and version (ASCII: URLs as
 * Fastify gives them, hex, decimals), and the objects holding them.
 */
const sizeOf = (key: string, answer: KeptAnswer) =>
  keptBodyBytes(answer.body) +
  key.length +
  (answer.etag?.length ?? 0) +
  (answer.mempool?.length ?? 0) +
  ENTRY_BYTES;

const JSON_TYPE = 'application/json; charset=utf-8';

/**
 * Answers a request from a kept answer, `tag` its ETag: 304 when the client holds that version, else the kept
 * body. Sends without awaiting the reply: a reply is a thenable that settles only once the response is
 * written, and awaiting it (or returning it from an async hook) hangs end-of-stream listeners on every
 * response (`eos` and its listeners: ~6% of the API's CPU profile of a kept contract status).
 */
function sendKept(request: FastifyRequest, reply: FastifyReply, tag: string, body: KeptBody): void {
  if (clientHasVersion(request, reply, tag)) void sendNotModified(reply);
  else void reply.type(JSON_TYPE).send(body);
}

/**
 * The route-level `onRequest` hook that answers from a kept answer before the request is validated, so that
 * an answer kept for a URL costs neither its parameters' schema validation (for 5 contract ids: 5 patterns and
 * 5 address checks, ~15% of the API's CPU profile) nor the hooks between. Only URLs whose 200 answer is kept
 * are answered here, and every one of them passed validation when that answer was made: validation is a
 * function of the URL alone, so it would pass again. Any other request (not a GET, no answer kept, a tag the
 * unvalidated parameters name otherwise) goes on to validation and the route's preHandler as before; an
 * invalid URL is never answered here, not even 304.
 *
 * A callback hook, not an async one: an async hook that sends must return the reply, which is awaited until
 * the response is written (see `sendKept`).
 */
function keptBeforeValidation(
  lookup: (request: FastifyRequest) => Promise<{ tag: string; body: KeptBody } | undefined>,
): onRequestHookHandler {
  return function keptAnswerBeforeValidation(request, reply, done) {
    if (request.method !== 'GET') {
      done();
      return;
    }
    lookup(request).then((kept) => {
      if (kept === undefined) done();
      else sendKept(request, reply, kept.tag, kept.body);
    }, done);
  };
}

/**
 * The hooks a route with kept answers runs, spread whole into its options (`...kept`): every one of them is
 * needed (an answer kept but not served before validation, or served but never kept, is a silent slowdown).
 */
export interface KeptAnswerHooks {
  onRequest: onRequestHookHandler;
  onSend: onSendHookHandler;
}

/** The tag a request was answered under, for the requests whose fresh body is to be kept. */
const pending = new WeakMap<FastifyRequest, { tag: string; generation: string }>();

/**
 * The onSend hook of a route with kept answers: `keep` (which returns the payload to send) runs for the answers
 * made fresh, those `pendingOf` holds a record of; every other one, a kept answer among them, passes through
 * as it is, without a promise of its own (a callback hook).
 */
function keepingOnSend<Made>(
  pendingOf: WeakMap<FastifyRequest, Made>,
  keep: (request: FastifyRequest, reply: FastifyReply, payload: unknown, made: Made) => Promise<unknown>,
): onSendHookHandler {
  return function keepFreshAnswer(request, reply, payload, done) {
    const made = pendingOf.get(request);
    if (made === undefined) {
      done(null, payload);
      return;
    }
    pendingOf.delete(request);
    keep(request, reply, payload, made).then((sent) => done(null, sent), done);
  };
}

/**
 * A fresh 200 body as the onSend hook gets it, as it is to be kept (`keptBody`; the body kept is the body
 * sent), or null when there is none to keep.
 */
function freshBody(reply: FastifyReply, payload: unknown): KeptBody | null {
  if (reply.statusCode !== 200) return null;
  return typeof payload === 'string' || Buffer.isBuffer(payload) ? keptBody(payload) : null;
}

/**
 * The hooks of a route whose answers are kept by their ETag (`computeTag`: the request's ETag, from cheap chain
 * state; null → no tag, nothing kept). The onRequest hook answers from a kept answer before validation (see
 * `keptBeforeValidation`); the preHandler answers 304 when the client holds the version, else the kept body
 * when there is one (the handler never runs); the onSend hook keeps a fresh 200 body when the tag is still the
 * current one.
 *
 * `generationOf`: what all the route's kept answers share, when that is not the ETag itself. For routes whose
 * ETag names one object at the tip (a block by height: tip + height), the tip: without it every request for
 * another height would be a "new tag" and drop what the others kept. For a route whose ETag leaves out part of
 * what the answer depends on (contract statuses: tagged by the tip as upstream does, yet a pending deployment
 * shows in them), the ETag plus that part; for one whose answer is built from a snapshot the tag does not name
 * alone (the mempool aggregates: their ages move with the tip), the snapshot the request was answered from, hence
 * the request. A kept body is still only answered under the ETag it was made with: the entry carries it, and the
 * URL is the key.
 */
export function keptByEtag(
  computeTag: (request: FastifyRequest) => Promise<string | null>,
  options: KeptAnswersOptions & {
    generationOf?: (tag: string, request: FastifyRequest) => string | Promise<string>;
  } = {},
): KeptAnswerHooks & { preHandler: preHandlerAsyncHookHandler } {
  const answers = new KeptAnswers(options);
  const generationOf = options.generationOf ?? ((tag: string) => tag);
  /** The answer kept for the request's URL under `tag` (and its generation). */
  const keptUnder = (request: FastifyRequest, tag: string, generation: string) => {
    const kept = answers.get(generation, request.url);
    return kept?.etag === tag ? kept.body : undefined;
  };
  const onRequest = keptBeforeValidation(async (request) => {
    const tag = await computeTag(request);
    if (tag === null) return undefined;
    const body = keptUnder(request, tag, await generationOf(tag, request));
    return body === undefined ? undefined : { tag, body };
  });
  const preHandler = async function keptAnswerHandler(request: FastifyRequest, reply: FastifyReply) {
    const tag = await computeTag(request);
    if (tag === null) return;
    if (clientHasVersion(request, reply, tag)) {
      await sendNotModified(reply);
      return reply;
    }
    if (request.method !== 'GET') return;
    const generation = await generationOf(tag, request);
    // (kept since the onRequest hook looked, or found under the validated parameters' tag: `0x`-less hashes)
    const body = keptUnder(request, tag, generation);
    if (body !== undefined) {
      sendKept(request, reply, tag, body);
      return reply;
    }
    pending.set(request, { tag, generation });
  };
  const onSend = keepingOnSend(pending, async (request, reply, payload, { tag, generation }) => {
    if (reply.statusCode !== 200) return payload;
    // the tag the answer went out under (a handler may name a more precise one: `latest` found a newer tip)
    if (reply.getHeader('etag') !== `"${tag}"` || (await computeTag(request)) !== tag) return payload;
    if ((await generationOf(tag, request)) !== generation) return payload;
    if (!answers.admits(generation, request.url)) return payload;
    const body = freshBody(reply, payload);
    if (body === null) return payload;
    answers.set(generation, request.url, { body, etag: tag });
    return body;
  });
  return { onRequest, preHandler, onSend };
}

/**
 * The chain state answers kept with their own tags depend on: `generation` (the tip: block and microblock; a
 * change drops every kept answer) and `mempool` (the mempool version: a change drops only the answers that
 * read the mempool).
 */
export interface KeptAnswerState {
  generation: string;
  mempool: string;
}

/** The state a request's fresh answer is being made under, and whether that answer read the mempool. */
const pendingOwnTag = new WeakMap<FastifyRequest, { state: KeptAnswerState; readsMempool: boolean }>();

/**
 * Tells `keptWithOwnTags` that the answer being made depends on the mempool (a mempool tx, an id found
 * nowhere yet): it is kept only while the mempool version stays.
 */
export function keptAnswerReadsMempool(request: FastifyRequest): void {
  const made = pendingOwnTag.get(request);
  if (made) made.readsMempool = true;
}

/**
 * The hooks of a route whose ETag is per answer: computed by the handler from the rows it read (a tx: where
 * it is mined, or its mempool state), so not known before the handler runs. A fresh 200 answer is kept with
 * the tag it went out with, under the chain state (`stateOf`, cheap; null → nothing kept) it was made under;
 * while that state stays the onRequest hook answers from the entry, before validation: 304 when the client
 * holds the entry's tag, else its body (neither validation nor the handler runs). The answer must be a function of the URL and that state: the URL,
 * query string included, is the key. An answer that reads the mempool must say so (`keptAnswerReadsMempool`).
 */
export function keptWithOwnTags(
  stateOf: (request: FastifyRequest) => Promise<KeptAnswerState | null>,
  options: KeptAnswersOptions = {},
): KeptAnswerHooks {
  const answers = new KeptAnswers(options);
  // before validation (see `keptBeforeValidation`): the URL of a kept answer passed it when the answer was made
  const onRequest = keptBeforeValidation(async (request) => {
    const state = await stateOf(request);
    if (state === null) return undefined;
    const kept = answers.get(state.generation, request.url);
    if (kept?.etag !== undefined && (kept.mempool === undefined || kept.mempool === state.mempool)) {
      return { tag: kept.etag, body: kept.body };
    }
    // made fresh (if it passes validation) under the state read now
    pendingOwnTag.set(request, { state, readsMempool: false });
    return undefined;
  });
  const onSend = keepingOnSend(pendingOwnTag, async (request, reply, payload, made) => {
    const etag = reply.getHeader('etag');
    if (reply.statusCode !== 200 || typeof etag !== 'string' || !etag.startsWith('"')) return payload;
    // Kept only if the state is the one the answer was made under: a read that raced with ingest (the rows
    // read were newer than the state) is sent as it is but not kept.
    const { state, readsMempool } = made;
    const now = await stateOf(request);
    if (now?.generation !== state.generation || now.mempool !== state.mempool) return payload;
    if (!answers.admits(state.generation, request.url)) return payload;
    const body = freshBody(reply, payload);
    if (body === null) return payload;
    answers.set(state.generation, request.url, {
      body,
      etag: etag.slice(1, -1),
      mempool: readsMempool ? state.mempool : undefined,
    });
    return body;
  });
  return { onRequest, onSend };
}
