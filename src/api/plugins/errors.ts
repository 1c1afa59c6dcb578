import type { FastifyError, FastifyInstance, FastifyReply } from 'fastify';
import { InvalidRequestError, NotFoundError } from '../../errors.js';
import { databaseFailure, FAILURE_MESSAGES, isPassing } from '../../store/database-errors.js';

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
 * schemas/parameter-errors.ts), domain errors → 400/404, a database failure → 503 when it may pass
 * (unreachable, timed out, overloaded, restarting: store/database-errors.ts) and 500 otherwise, each with its
 * own message; client errors Fastify raises (bad JSON, too long a URL...) keep their 4xx, anything else → 500
 * with a generic message (details go to the log).
 */
export function registerErrorHandling(app: FastifyInstance) {
  app.setErrorHandler((err: FastifyError, request, reply) => {
    if (err.validation) return send(reply, errorBody(400, err.message, 'FST_ERR_VALIDATION'));
    if (err instanceof InvalidRequestError) return send(reply, errorBody(400, err.message));
    if (err instanceof NotFoundError) return send(reply, errorBody(404, err.message));
    const failure = databaseFailure(err);
    if (failure !== undefined) {
      // a passing state of the database (down, slow, restarting...) is the operator's to watch, not a bug
      if (isPassing(failure)) {
        request.log.warn({ err: err.message, code: err.code, failure }, 'database failure');
        return send(reply, errorBody(503, FAILURE_MESSAGES[failure]));
      }
      request.log.error({ err, failure }, 'database failure');
      return send(reply, errorBody(500, FAILURE_MESSAGES[failure]));
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
