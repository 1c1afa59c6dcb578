import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { statusAnswers, type StatusOptions } from '../answers/status.js';
import { errorResponses } from '../schemas/common.js';
import { Health, Readiness, ServerStatus } from '../schemas/status.js';
import { send } from './send.js';

/**
 * Service routes: `GET /extended`, `GET /health` and `GET /ready` (answers/status.ts says what each checks).
 * /health and /ready are outside access control.
 */
export const statusRoutes: FastifyPluginAsyncTypebox<StatusOptions> = async (app, options) => {
  const status = statusAnswers(options);
  app.get(
    '/extended',
    {
      schema: {
        operationId: 'get_status',
        summary: 'API status',
        description: 'The server version, its status and the chain tip it serves.',
        tags: ['Status'],
        response: { 200: ServerStatus, ...errorResponses },
      },
    },
    async (request, reply) => send(request, reply, await status.serverStatus()),
  );

  app.get(
    '/health',
    {
      schema: {
        operationId: 'get_health',
        summary: 'Liveness',
        description: 'Answers 200 while the process is up; checks nothing else (use /ready for that).',
        tags: ['Status'],
        response: { 200: Health },
      },
    },
    async (request, reply) => send(request, reply, status.health()),
  );

  app.get(
    '/ready',
    {
      schema: {
        operationId: 'get_readiness',
        summary: 'Readiness',
        description:
          '200 when the database answers, every migration is applied and ingest in this process is not stuck ' +
          '(observer messages waiting past INGEST_STALL_SECONDS without one taken), 503 otherwise. Also reports the ' +
          'ingest lag: blocks (burn blocks announced past the burn block of the Stacks tip) and seconds since ' +
          'the last event-observer message, and on a replica how far it is behind the primary. The answer comes ' +
          'from a check at most one second old.',
        tags: ['Status'],
        response: {
          200: {
            ...Readiness,
            'x-response-description': 'Ready: the database answers and is fully migrated',
          },
          503: { ...Readiness, 'x-response-description': 'Not ready: the body says what failed' },
        },
      },
    },
    async (request, reply) => send(request, reply, await status.readiness()),
  );
};
