import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { accountStateAnswers } from '../answers/account-state.js';
import {
  getAccountStxBalanceRoute,
  getPrincipalFtBalancesRoute,
  getPrincipalStxBalanceRoute,
} from '../schemas/balances.js';
import { getAccountNoncesRoute } from '../schemas/nonces.js';
import type { RouteOptions } from './route-options.js';
import { answerFromCache, send } from './send.js';

// An account's balances per asset kind and its nonces (docs/upstream.md C.11 to C.14): answers/account-state.ts's.

export const accountStateRoutes: FastifyPluginAsyncTypebox<RouteOptions> = async (app, { store }) => {
  const accounts = accountStateAnswers(store);
  app.get(
    getAccountNoncesRoute.url,
    { schema: getAccountNoncesRoute.schema, onRequest: answerFromCache(accounts.caches.nonces) },
    async (request, reply) =>
      send(request, reply, await accounts.nonces(request, request.params.principal, request.query)),
  );
  app.get(
    getAccountStxBalanceRoute.url,
    { schema: getAccountStxBalanceRoute.schema, onRequest: answerFromCache(accounts.caches.stxBalance) },
    async (request, reply) =>
      send(request, reply, await accounts.stxBalance(request, request.params.principal, request.query)),
  );
  app.get(
    getPrincipalStxBalanceRoute.url,
    { schema: getPrincipalStxBalanceRoute.schema, onRequest: answerFromCache(accounts.caches.v2StxBalance) },
    async (request, reply) =>
      send(
        request,
        reply,
        await accounts.v2StxBalance(request, request.params.principal, request.query.include_mempool),
      ),
  );
  app.get(
    getPrincipalFtBalancesRoute.url,
    { schema: getPrincipalFtBalancesRoute.schema, onRequest: answerFromCache(accounts.caches.ftBalances) },
    async (request, reply) =>
      send(request, reply, await accounts.ftBalances(request, request.params.principal, request.query)),
  );
};
