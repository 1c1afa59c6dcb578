import assert from 'node:assert/strict';
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { buildApiServer, type ApiServerOptions } from '../../src/api/server.js';
import { Ingestor, type IngestorOptions } from '../../src/ingest/ingestor.js';
import { replayFile } from '../../src/ingest/replay.js';
import type { Engine } from '../../src/store/db.js';
import { migrate } from '../../src/store/migrate.js';
import { Store } from '../../src/store/store.js';
import { TestChain } from './chain.js';
import { connectTestDatabase, createFilledDatabaseUrl, openTestStore, silentLogger } from './database.js';
import { listenLocal } from './http.js';
import { fixtureFile, fixtureIsMainnet } from './shared.js';

// The read API as tests use it: a store (new, or one the test holds), optionally a recorded chain replayed
// into it, and the server built over it the way `serve` builds it.

export const API_VERSION = 'v0.0.1 (test:123456)';

export type TestApiOptions = Partial<Omit<ApiServerOptions, 'store' | 'logger'>> & {
  /** logs of the server and the ingestor (default: silent) */
  logger?: Logger;
  /** ingest options besides the chain and the logger (e.g. `onMessage`) */
  ingest?: Omit<IngestorOptions, 'isMainnet' | 'logger'>;
  /** the chain ingest assumes (default: the fixture's, else testnet, as TestChain builds) */
  mainnet?: boolean;
  /** a shared fixture (../shared/fixtures/event-replay/<name>.tsv) replayed before the server starts */
  fixture?: string;
  /** listen on a loopback port (for real clients: fetch, browsers, SDKs); `baseUrl` is then set */
  listen?: boolean;
} & ({ engine: Engine; store?: never } | { engine?: never; store: Store });

export interface TestApi {
  store: Store;
  app: FastifyInstance;
  /** the ingest path into the store (what the observer server calls) */
  ingestor: Ingestor;
  /** a generated testnet chain sent through `ingestor` */
  chain: TestChain;
  /** `http://127.0.0.1:<port>` when started with `listen` */
  baseUrl: string;
  /** closes the server, and the store unless the test passed its own */
  close(): Promise<void>;
}

/**
 * A second API server over `store`, with caches of its own: what a request answers when nothing is kept, to
 * compare a cached answer against byte for byte.
 */
export function freshApiServer(store: Store): Promise<FastifyInstance> {
  return buildApiServer({ apiVersion: API_VERSION, store, logger: silentLogger });
}

/** The API over a new store of `engine`, or over the test's `store` (left open by `close`). */
export async function startTestApi(options: TestApiOptions): Promise<TestApi> {
  const {
    engine,
    store: given,
    logger = silentLogger,
    ingest,
    mainnet,
    fixture,
    listen,
    ...server
  } = options;
  const isMainnet = mainnet ?? (fixture !== undefined && fixtureIsMainnet(fixture));
  // A fixture on PostgreSQL is replayed once per process, and copied for each API after the first (the same
  // rows as a replay, which a test that watches the replay itself, through `ingest`, gets instead).
  const copied = !given && engine === 'postgres' && fixture !== undefined && ingest === undefined;
  const store =
    given ?? (copied ? await openReplayedFixtureStore(fixture, isMainnet) : await openTestStore(engine!));
  try {
    const ingestor = new Ingestor(store, { ...ingest, isMainnet, logger });
    if (fixture !== undefined && !copied) await replayFile(ingestor, fixtureFile(fixture));
    const app = await buildApiServer({ apiVersion: API_VERSION, ...server, store, logger });
    const baseUrl = listen ? await listenLocal(app) : '';
    return {
      store,
      app,
      ingestor,
      chain: new TestChain(ingestor),
      baseUrl,
      async close() {
        await app.close();
        if (!given) await store.close();
      },
    };
  } catch (err) {
    if (!given) await store.close();
    throw err;
  }
}

/** A new PostgreSQL store holding `fixture` as replayed (into a template, once per process: see above). */
async function openReplayedFixtureStore(fixture: string, isMainnet: boolean): Promise<Store> {
  const url = await createFilledDatabaseUrl(`${fixture}|${isMainnet}`, async (templateUrl) => {
    const store = new Store(await connectTestDatabase(templateUrl, { poolMax: 2 }));
    try {
      await migrate(store.sql);
      await replayFile(new Ingestor(store, { isMainnet, logger: silentLogger }), fixtureFile(fixture));
    } finally {
      await store.close();
    }
  });
  return new Store(await connectTestDatabase(url, { poolMax: 2 }));
}

/** Runs `fn` on a new API over a new store of `engine`, closed afterwards. */
export async function withApi(engine: Engine, fn: (api: TestApi) => Promise<void>): Promise<void> {
  const api = await startTestApi({ engine });
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

/**
 * For routes that batch the reads of requests arriving together (store/read/batched.ts): asks the URLs that
 * `urlsOf` chooses (from the chain in the store) all at once of an API on `fixture`, then one at a time of a
 * second API on the same chain in a database of its own (so nothing read or rendered by the first is kept for
 * it), and asserts each pair of answers equal: status, body and ETag. Returns the statuses, in the URLs' order.
 * With `warm`, each API is first asked every URL once, one at a time (what it renders is then kept, so the
 * compared asks take the paths of a cached rendering); `afterTogether` is called with the first API's store once
 * its answers to the URLs asked together are in (to check which path they took).
 */
export async function sameAnswersTogetherAndAlone(
  options: { engine: Engine; fixture: string; warm?: boolean },
  urlsOf: (store: Store) => Promise<string[]>,
  afterTogether: (store: Store) => void | Promise<void> = () => {},
): Promise<number[]> {
  const { warm = false, ...apiOptions } = options;
  const warmUp = async (api: TestApi, urls: string[]) => {
    if (!warm) return;
    for (const url of urls) await get(api.app, url);
  };
  const batched = await startTestApi(apiOptions);
  try {
    const urls = await urlsOf(batched.store);
    await warmUp(batched, urls);
    const together = await Promise.all(urls.map((url) => get(batched.app, url)));
    await afterTogether(batched.store);
    const fresh = await startTestApi(apiOptions);
    try {
      await warmUp(fresh, urls);
      const statuses: number[] = [];
      for (const [i, url] of urls.entries()) {
        const alone = await get(fresh.app, url);
        assert.equal(together[i].statusCode, alone.statusCode, url);
        assert.equal(together[i].body, alone.body, url);
        assert.equal(together[i].headers.etag, alone.headers.etag, url);
        statuses.push(alone.statusCode);
      }
      return statuses;
    } finally {
      await fresh.close();
    }
  } finally {
    await batched.close();
  }
}
