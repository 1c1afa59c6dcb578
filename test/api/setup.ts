import type { FastifyInstance } from 'fastify';
import { buildApiServer } from '../../src/api/server.js';
import { Ingestor } from '../../src/ingest/ingestor.js';
import type { Engine } from '../../src/store/db.js';
import type { Store } from '../../src/store/store.js';
import { TestChain } from '../support/chain.js';
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

/** Runs `fn` on a fresh API fixture, closed afterwards. */
export async function withApi(engine: Engine, fn: (api: ApiFixture) => Promise<void>): Promise<void> {
  const api = await openApi(engine);
  try {
    await fn(api);
  } finally {
    await api.close();
  }
}

export async function get(app: FastifyInstance, url: string, headers: Record<string, string> = {}) {
  return app.inject({ method: 'GET', url, headers });
}

/** GET with the answer's status, headers and parsed JSON body (null when empty). */
export async function getJson(app: FastifyInstance, url: string, headers: Record<string, string> = {}) {
  const res = await get(app, url, headers);
  return { status: res.statusCode, headers: res.headers, body: res.body.length ? res.json() : null };
}
