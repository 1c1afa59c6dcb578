import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { FastifyInstance } from 'fastify';
import type { MessageOutcome } from './ingestor.js';

// Who may post to the observer, and how much memory what is posted may take before it is parsed.
//
// The secret. A stacks-node sends no credential: its `[[events_observer]]` entry has `endpoint` (host:port),
// `events_keys`, `timeout_ms` and `disable_retries` only (stacks-core's `EventObserverConfigFile`, which refuses
// unknown fields), and it posts to `http://{endpoint}/{path}`, sending the URL's path as written. So the secret
// rides in the endpoint's path: `endpoint = "127.0.0.1:3700/<secret>"` makes the node post to
// `/<secret>/new_block`. With OBSERVER_SECRET set, a request whose path does not start with `/<secret>/` gets
// 401 before its body is read (a local process that does not know it can post nothing), and is logged. The
// secret is taken off the URL before routing, so routes, logs and error messages never see it. Without a
// secret the observer answers as it always did (loopback is then the only guard).
//
// The body budget. A body costs its bytes while it is received, then ~3 times that while it is decoded and
// parsed (measured: three 200 MB junk posts at once took the process to 1.8 GB). The bodies in flight, from the
// first byte received until their message is committed, may add up to `budgetBytes` (OBSERVER_BODY_LIMIT_MB,
// the largest message accepted): a request that would go over it is answered 503 before its body is read, and
// the node sends it again. A body being ingested counts twice while its request is still open (once as
// received, once as ingested): stricter, never looser.
//
// Invariant kept beside both: a stacks-node configured with the endpoint is always served. Its messages come
// one at a time; one of up to OBSERVER_BODY_LIMIT_MB is admitted whenever no other body is in flight, and a
// re-sent message (the node timed out while its first copy was ingested) is admitted once that copy is done.

type Ingest = { take(path: string, body: Buffer): Promise<MessageOutcome> };

export interface ObserverGuards {
  /** Fastify's `rewriteUrl`: the URL without the secret (a request that carries it is marked admitted). */
  rewriteUrl(raw: IncomingMessage): string;
  /** Adds the hooks: 401 without the secret, 503 over the body budget. */
  register(app: FastifyInstance): void;
  /** `ingestor`, its messages counted against the body budget until they are committed. */
  counting(ingestor: Ingest): Ingest;
}

const sha256 = (text: string) => createHash('sha256').update(text).digest();

export function observerGuards(options: { secret: string; budgetBytes: number }): ObserverGuards {
  const secretHash = options.secret ? sha256(options.secret) : undefined;
  /** requests that carried the secret (raw request → its URL without the secret) */
  const admitted = new WeakSet<IncomingMessage>();
  let receiving = 0;
  let ingesting = 0;
  let refused = { count: 0, loggedAt: 0 };

  /** Whether the first segment of `url` is the secret (compared in constant time); the rest of the URL. */
  const withoutSecret = (url: string): string | undefined => {
    const end = url.indexOf('/', 1);
    if (end < 0 || secretHash === undefined) return undefined;
    return timingSafeEqual(sha256(url.slice(1, end)), secretHash) ? url.slice(end) : undefined;
  };

  return {
    rewriteUrl(raw) {
      const url = raw.url ?? '/';
      if (secretHash === undefined) return url;
      const rest = withoutSecret(url);
      if (rest === undefined) return url;
      admitted.add(raw);
      return rest;
    },

    register(app) {
      app.addHook('onRequest', (request, reply, done) => {
        if (secretHash !== undefined && !admitted.has(request.raw)) {
          // logged at once, then at most every 10 s with the count (a flood must not flood the log)
          refused.count += 1;
          if (Date.now() - refused.loggedAt >= 10_000) {
            request.log.warn(
              { ip: request.ip, method: request.method, refused: refused.count },
              'observer request without OBSERVER_SECRET in its path: 401',
            );
            refused = { count: 0, loggedAt: Date.now() };
          }
          void reply.code(401).send({
            statusCode: 401,
            error: 'Unauthorized',
            message: 'this observer takes messages at /<OBSERVER_SECRET>/<path> only',
          });
          return;
        }
        if (request.method !== 'POST') return done();
        const length = Number(request.headers['content-length']);
        // a body of unknown length (chunked) may be as large as the largest accepted
        const declared = Number.isSafeInteger(length) && length >= 0 ? length : options.budgetBytes;
        // larger than any message accepted: Fastify's body limit answers 413 before reading it
        if (declared > options.budgetBytes) return done();
        if (declared > 0 && receiving + ingesting + declared > options.budgetBytes) {
          void reply.code(503).header('retry-after', '1').send({
            statusCode: 503,
            error: 'Service Unavailable',
            message: 'other observer messages are being received or applied: send this one again',
          });
          return;
        }
        receiving += declared;
        reply.raw.once('close', () => (receiving -= declared));
        done();
      });
    },

    counting(ingestor) {
      return {
        async take(path, body) {
          const bytes = body.length;
          ingesting += bytes;
          try {
            return await ingestor.take(path, body);
          } finally {
            ingesting -= bytes;
          }
        },
      };
    },
  };
}
