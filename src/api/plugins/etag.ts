import type { FastifyReply, FastifyRequest, preHandlerAsyncHookHandler } from 'fastify';

const REVALIDATE = 'public, no-cache, must-revalidate';

/** The entity tags listed in If-None-Match (quotes and weak prefixes removed). */
export function parseIfNoneMatch(header: string | undefined): string[] {
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
 * A preHandler that tags the answer with an ETag computed from cheap chain state, and answers 304 (no body,
 * the handler never runs) when the client already holds that version. No tag → no caching.
 */
export function etag(
  compute: (request: FastifyRequest) => Promise<string | null>,
): preHandlerAsyncHookHandler {
  return async function etagHandler(request: FastifyRequest, reply: FastifyReply) {
    const tag = await compute(request);
    if (tag === null) return;
    reply.header('cache-control', REVALIDATE);
    if (parseIfNoneMatch(request.headers['if-none-match']).includes(tag)) {
      await reply.code(304).send();
      return reply;
    }
    reply.header('etag', `"${tag}"`);
  };
}
