import type { FastifyReply, FastifyRequest, onRequestHookHandler } from 'fastify';
import { holds, type Answer } from '../answers/answer.js';
import type { AnswerCache } from '../cache/answer-cache.js';

const JSON_TYPE = 'application/json; charset=utf-8';
/** A tagged answer may be stored by clients and proxies, but revalidated before each use (upstream's). */
const REVALIDATE = 'public, no-cache, must-revalidate';

/**
 * Writes any answer of an answer module: a redirect; for a tagged answer `Cache-Control: no-cache`, then 304
 * when the client holds the tag, else the `ETag`; the JSON type; and a fresh answer marked cacheable is cached
 * (cache/answer-cache.ts: a GET's, the body cached being the body sent). An answer without a tag gets the
 * conventions' `no-store` (plugins/conventions.ts); an error is thrown by the module, never sent from here
 * (plugins/errors.ts).
 *
 * Gives the payload for the handler to return (`async (request, reply) => send(request, reply, await ...)`),
 * typed as the route's 200 schema it is the serialization of: Fastify sends a string or Buffer of the JSON type
 * as it is, and no payload (a 304, a redirect) as `reply.send()` would. Never the reply itself: an async
 * handler's promise would adopt it, a thenable that settles only once the response is written, which costs an
 * end-of-stream listener on every response (bench finding F-api-answer-bytes).
 */
export function send<Shape>(request: FastifyRequest, reply: FastifyReply, answer: Answer): Shape {
  if (answer.status === 302) {
    reply.header('location', answer.location).code(302);
    return undefined as Shape;
  }
  if (answer.status === 304 || (answer.etag !== undefined && holds(request, answer.etag))) {
    reply.header('cache-control', REVALIDATE).code(304);
    return undefined as Shape;
  }
  if (answer.etag !== undefined) reply.header('cache-control', REVALIDATE).header('etag', `"${answer.etag}"`);
  if (answer.status !== 200) reply.code(answer.status);
  reply.type(JSON_TYPE);
  const { cacheable } = answer;
  if (cacheable === undefined || request.method !== 'GET') return answer.body as Shape;
  return cacheable.cache.add(request.url, answer, cacheable.state) as Shape;
}

/**
 * The route-level `onRequest` hook that answers from the route's answer cache before the request is validated
 * (bench finding F-api-kept-before-validation: for 5 contract ids, validation alone was ~15% of the API's CPU
 * profile). Only URLs whose answer is cached are answered here, and each passed validation when that answer was
 * made; any other request (not a GET, nothing cached) goes on to validation and the handler. A callback hook,
 * sending without awaiting: an async hook that sends must return the reply, awaited until the response is
 * written (~6% of the API's CPU profile of a cached contract status, in `eos` and its listeners).
 */
export function answerFromCache(cache: AnswerCache): onRequestHookHandler {
  return function answerFromCacheBeforeValidation(request, reply, done) {
    if (request.method !== 'GET') {
      done();
      return;
    }
    cache.lookup(request.url).then((cached) => {
      if (cached === undefined) done();
      else void reply.send(send(request, reply, { status: 200, body: cached.body, etag: cached.etag }));
    }, done);
  };
}
