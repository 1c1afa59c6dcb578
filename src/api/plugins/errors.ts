import type { FastifyError, FastifyInstance, FastifyReply } from 'fastify';
import { InvalidRequestError, NotFoundError } from '../../errors.js';

const STATUS_TEXT: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  406: 'Not Acceptable',
  410: 'Gone',
  413: 'Payload Too Large',
  414: 'URI Too Long',
  415: 'Unsupported Media Type',
  429: 'Too Many Requests',
  431: 'Request Header Fields Too Large',
  500: 'Internal Server Error',
  503: 'Service Unavailable',
};

export interface ErrorBody {
  statusCode: number;
  code?: string;
  error: string;
  message: string;
}

function errorBody(statusCode: number, message: string, code?: string): ErrorBody {
  const error = STATUS_TEXT[statusCode] ?? (statusCode < 500 ? 'Bad Request' : 'Internal Server Error');
  return code ? { statusCode, code, error, message } : { statusCode, error, message };
}

/** Errors of postgres.js / PostgreSQL that mean "the database cannot be reached right now". */
const UNAVAILABLE_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENOTFOUND',
  'EPIPE',
  'CONNECT_TIMEOUT',
  'CONNECTION_CLOSED',
  'CONNECTION_ENDED',
  'CONNECTION_DESTROYED',
  '57P01', // admin_shutdown
  '57P02', // crash_shutdown
  '57P03', // cannot_connect_now
  '53300', // too_many_connections
]);

function isDatabaseUnavailable(err: unknown): boolean {
  const code = (err as { code?: string } | null)?.code;
  return typeof code === 'string' && (UNAVAILABLE_CODES.has(code) || code.startsWith('08'));
}

function send(reply: FastifyReply, body: ErrorBody) {
  // An error is never cacheable, whatever the route set before failing.
  reply.removeHeader('etag');
  return reply.code(body.statusCode).header('cache-control', 'no-store').send(body);
}

/**
 * Errors the router raises before any route or hook runs (Fastify's `frameworkErrors`): a malformed
 * percent-encoding, or a path parameter longer than the router's limit. Same JSON body as every error.
 */
export function frameworkErrorHandler(maxParamLength: number, headers: Record<string, string>) {
  return (err: FastifyError, _request: unknown, reply: FastifyReply) => {
    // No hook runs for these: the headers every answer carries are set here.
    reply.headers(headers);
    if (err.code === 'FST_ERR_MAX_PARAM_LENGTH') {
      return send(reply, errorBody(414, `a path parameter is longer than ${maxParamLength} characters`));
    }
    if (err.code === 'FST_ERR_BAD_URL') {
      return send(reply, errorBody(400, 'the URL path is not valid (malformed percent-encoding)'));
    }
    return send(reply, errorBody(err.statusCode ?? 500, err.message));
  };
}

/**
 * One mapping of failures to HTTP: a bad parameter → 400 (schema validation, or a ParameterError found
 * before it; the message in words, e.g. `query parameter limit must be 50 or less; got 51`, see
 * schemas/parameter-errors.ts), domain errors → 400/404, database unreachable → 503, client errors Fastify raises (bad JSON,
 * too long a URL...) keep their 4xx, anything else → 500 with a generic message (details go to the log).
 */
export function registerErrorHandling(app: FastifyInstance) {
  app.setErrorHandler((err: FastifyError, request, reply) => {
    if (err.validation) return send(reply, errorBody(400, err.message, 'FST_ERR_VALIDATION'));
    if (err instanceof InvalidRequestError) return send(reply, errorBody(400, err.message));
    if (err instanceof NotFoundError) return send(reply, errorBody(404, err.message));
    if (isDatabaseUnavailable(err)) {
      request.log.warn({ err: err.message }, 'database unavailable');
      return send(reply, errorBody(503, 'The database service is unavailable'));
    }
    const status = err.statusCode;
    if (status && status >= 400 && status < 500) return send(reply, errorBody(status, err.message, err.code));
    request.log.error({ err }, 'request failed');
    return send(reply, errorBody(500, 'An internal error occurred'));
  });

  app.setNotFoundHandler((request, reply) =>
    send(reply, errorBody(404, `Route ${request.method}:${request.url} not found`)),
  );
}
