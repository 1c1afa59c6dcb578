import type { FastifyReply, FastifyRequest, preHandlerAsyncHookHandler } from 'fastify';

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
 * A preHandler that tags the answer with an ETag computed from cheap chain state, and answers 304 (no body,
 * the handler never runs) when the client already holds that version. No tag → no caching.
 */
export function etag(
  compute: (request: FastifyRequest) => Promise<string | null>,
): preHandlerAsyncHookHandler {
  return async function etagHandler(request: FastifyRequest, reply: FastifyReply) {
    const tag = await compute(request);
    if (tag === null) return;
    if (clientHasVersion(request, reply, tag)) {
      await sendNotModified(reply);
      return reply;
    }
  };
}
