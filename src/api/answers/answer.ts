import type { AnswerCache, CacheState } from '../cache/answer-cache.js';

// What a read route sends, made by the answer modules of this folder and written to the client by one function
// (`send`, routes/send.ts). A module reads, renders and tags; it never touches the HTTP reply.

/**
 * JSON text, as the compiled serializer of the answer's schema writes it (render/serializer.ts), or put
 * together from such text: sent as it is.
 */
export type JsonText = string | Buffer;

/** A body with its status: 200, a search's 404 (its own shape), or the readiness report's 503. */
export interface Body {
  status: 200 | 404 | 503;
  body: JsonText;
  /** the version of the answer (an unquoted ETag): sent with `Cache-Control: no-cache`; none → `no-store` */
  etag?: string;
  /**
   * The answer shows the mempool (a pending tx, an id not found yet, pending balances): a cached copy is used
   * only while the mempool version stays (cache/answer-cache.ts).
   */
  readsMempool?: boolean;
  /**
   * A block stored as a sibling (at or below the tip: the chain state stays) may change the answer: it shows a
   * row that a sibling's rows can outrank (one off the canonical chain, say). Sent, never cached.
   */
  siblingMayChange?: boolean;
  /** where a fresh answer may be cached, and the chain state it was made under (set by `AnswerCache.made`) */
  cacheable?: { cache: AnswerCache; state: CacheState };
}

/** The client holds this version already (If-None-Match): 304, no body. */
export interface NotModified {
  status: 304;
  etag: string;
}

export interface Redirect {
  status: 302;
  location: string;
}

export type Answer = Body | NotModified | Redirect;

/** JSON text to send with status 200, tagged when `etag` is given. */
export function jsonAnswer(body: JsonText, etag?: string, readsMempool = false): Body {
  return { status: 200, body, etag, readsMempool };
}

export const notModified = (etag: string): NotModified => ({ status: 304, etag });

export const redirect = (location: string): Redirect => ({ status: 302, location });

/** What an answer module needs of a request besides its parameters: its URL and its If-None-Match. */
export interface Asked {
  readonly url: string;
  readonly headers: { readonly 'if-none-match'?: string };
}

/**
 * Whether the client holds the version `tag` names (one of the entity tags of its If-None-Match, quotes and
 * weak prefixes removed). A module asks before it reads when it knows the tag first (from the chain state):
 * a 304 then costs no query.
 */
export function holds(asked: Asked, tag: string): boolean {
  const header = asked.headers['if-none-match'];
  if (header === undefined || header === '') return false;
  return header.split(',').some((listed) => {
    const bare = listed.trim().replace(/^W\//, '');
    const unquoted =
      bare.length >= 2 && bare.startsWith('"') && bare.endsWith('"') ? bare.slice(1, -1) : bare;
    return unquoted === tag;
  });
}
