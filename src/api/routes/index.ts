import type { FastifyInstance } from 'fastify';
import { accountStateRoutes } from './account-state.js';
import { addressHistoryRoutes } from './address-history.js';
import { addressRoutes } from './addresses.js';
import { blockListRoutes } from './block-lists.js';
import { blockRoutes, microblockRoutes, v1BlockRoutes } from './blocks.js';
import { contractInfoRoutes } from './contract-info.js';
import { contractRoutes } from './contracts.js';
import { mempoolRoutes } from './mempool.js';
import type { RouteOptions } from './route-options.js';
import { tokenRoutes } from './tokens.js';
import { transactionRoutes } from './transactions.js';
import { txListRoutes } from './tx-lists.js';

/** The read API: one plugin per resource. */
export async function registerRoutes(app: FastifyInstance, options: RouteOptions) {
  await app.register(blockRoutes, options);
  await app.register(v1BlockRoutes, options);
  await app.register(microblockRoutes, options);
  await app.register(blockListRoutes, options);
  await app.register(mempoolRoutes, options);
  await app.register(contractRoutes, options);
  await app.register(contractInfoRoutes, options);
  await app.register(transactionRoutes, options);
  await app.register(txListRoutes, options);
  await app.register(tokenRoutes, options);
  await app.register(addressRoutes, options);
  await app.register(addressHistoryRoutes, options);
  await app.register(accountStateRoutes, options);
}
