import type { FastifyInstance } from 'fastify';
import { buildApiServer } from '../../src/api/server.js';
import { Ingestor } from '../../src/ingest/ingestor.js';
import type { Engine } from '../../src/store/db.js';
import type { Store } from '../../src/store/store.js';
import { TestChain } from '../support/synthetic-chain.js';
import { openTestStore, silentLogger } from '../support/database.js';

export const API_VERSION = 'v0.0.1 (test:123456)';

export interface ApiFixture {
  store: Store;
  app: FastifyInstance;
  chain: TestChain;
  close(): Promise<void>;
}

/** A fresh store on the engine, the API over it, and a synthetic testnet chain to feed it. */
export async function openApi(engine: Engine): Promise<ApiFixture> {
  const store = await openTestStore(engine);
  const app = await buildApiServer({ store, logger: silentLogger, apiVersion: API_VERSION });
  const chain = new TestChain(new Ingestor(store, { isMainnet: false, logger: silentLogger }));
  return {
    store,
    app,
    chain,
    async close() {
      await app.close();
      await store.close();
    },
  };
}

export async function get(app: FastifyInstance, url: string, headers: Record<string, string> = {}) {
  return app.inject({ method: 'GET', url, headers });
}
