import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import type { Config } from '../config.js';
import {
  defaultNakamotoHeight,
  generateChain,
  type GenerateOptions,
  type GenerateReport,
} from '../devnet/chain.js';
import { isEmptyIndex, showcaseIds } from '../store/read/showcase.js';
import type { Store } from '../store/store.js';
import { MEMPOOL_GC_BLOCKS, MEMPOOL_GC_MINUTES } from '../store/write/mempool.js';
import { generationProgress } from './generate.js';
import { createIngestor } from './runtime.js';
import { serve, type RunningService } from './serve.js';

// `npm start`: the service on the embedded database, seeded with a generated demo chain the first time,
// then a list of URLs to try.

/**
 * The demo chain: small enough to generate and index in seconds, rich enough to show every feature: epoch
 * 2.x with microblocks and a fork, then Nakamoto tenures, as today's chain.
 */
const DEMO_CHAIN: Omit<GenerateOptions, 'onProgress'> = {
  blocks: 100,
  accounts: 40,
  seed: 'demo',
  txsPerBlock: 10,
  workers: 0,
  nakamotoHeight: defaultNakamotoHeight(100),
};

/**
 * Generates the demo chain straight into the ingestor (the same path as the live event observer) if
 * nothing was ever indexed. Returns the generator's report, or null when the database already had data.
 */
export async function seedDemoChain(
  store: Store,
  config: Config,
  logger: Logger,
  options: { chain?: Omit<GenerateOptions, 'onProgress'>; showProgress?: boolean } = {},
): Promise<GenerateReport | null> {
  if (!(await isEmptyIndex(store.sql))) return null;
  const chain = options.chain ?? DEMO_CHAIN;
  logger.info(
    { blocks: chain.blocks, accounts: chain.accounts },
    'empty database: indexing a generated demo chain',
  );
  const ingestor = createIngestor(store, config, logger);
  const bar = options.showProgress ? generationProgress('demo chain', chain.blocks) : undefined;
  const generated = {
    mempoolGcBlocks: MEMPOOL_GC_BLOCKS,
    mempoolGcMinutes: MEMPOOL_GC_MINUTES,
    ...chain,
    onProgress: bar?.update,
  };
  const report = await generateChain(generated, async (message) => {
    await ingestor.apply(message.path, message.payload, message.receivedAt);
  });
  bar?.done();
  logger.info(
    {
      blocks: report.tipHeight,
      txs: report.canonicalTxs,
      mempool: report.mempoolPending,
      seconds: report.seconds,
    },
    'demo chain indexed',
  );
  return report;
}

/** Paths worth trying on this database, kept only if the running API answers them with 200. */
export async function urlsToTry(
  api: FastifyInstance,
  store: Store,
): Promise<{ what: string; path: string }[]> {
  const ids = await showcaseIds(store.sql);
  const candidates: { what: string; path: string | null }[] = [
    { what: 'latest block', path: '/extended/v2/blocks/latest' },
    {
      what: 'a block by height',
      path: ids.tipHeight > 1 ? `/extended/v2/blocks/${ids.tipHeight - 1}` : null,
    },
    {
      what: 'block by burn block height',
      path:
        ids.burnBlockHeight !== null
          ? `/extended/v1/block/by_burn_block_height/${ids.burnBlockHeight}`
          : null,
    },
    { what: 'a transaction', path: ids.txId && `/extended/v1/tx/${ids.txId}` },
    {
      what: 'several transactions',
      path: ids.txId && ids.otherTxId && `/extended/v1/tx/multiple?tx_id=${ids.txId}&tx_id=${ids.otherTxId}`,
    },
    {
      what: 'a busy address: balances',
      path: ids.busyAddress && `/extended/v1/address/${ids.busyAddress}/balances`,
    },
    {
      what: 'a busy address: transactions',
      path: ids.busyAddress && `/extended/v1/address/${ids.busyAddress}/transactions_with_transfers?limit=5`,
    },
    {
      what: 'a busy address: one transaction with its transfers',
      path:
        ids.busyAddress &&
        ids.busyTxId &&
        `/extended/v1/address/${ids.busyAddress}/${ids.busyTxId}/with_transfers`,
    },
    { what: 'mempool stats', path: '/extended/v1/tx/mempool/stats' },
    { what: 'mempool fees', path: '/extended/v2/mempool/fees' },
    {
      what: 'smart contract status',
      path: ids.contractId && `/extended/v2/smart-contracts/status?contract_id=${ids.contractId}`,
    },
    { what: 'API docs', path: '/doc' },
  ];
  const urls: { what: string; path: string }[] = [];
  for (const { what, path } of candidates) {
    if (!path) continue;
    let url = path;
    let response = await api.inject({ method: 'GET', url });
    // a docs page may redirect once (e.g. to its index): print where it lands
    const location = response.headers.location;
    if (response.statusCode >= 300 && response.statusCode < 400 && typeof location === 'string') {
      url = new URL(location, `http://localhost${path}`).pathname;
      response = await api.inject({ method: 'GET', url });
    }
    if (response.statusCode === 200) urls.push({ what, path: url });
  }
  return urls;
}

/** `start`: serve on the configured database (PGlite by default), seeding an empty one with the demo chain. */
export async function start(config: Config, logger: Logger): Promise<RunningService> {
  const service = await serve(config, logger, 'both', {
    beforeListen: async (store) => {
      await seedDemoChain(store, config, logger, { showProgress: true });
    },
  });
  const api = service.api!;
  const host = config.API_HOST === '0.0.0.0' || config.API_HOST === '::' ? 'localhost' : config.API_HOST;
  const address = api.server.address();
  const port = typeof address === 'object' && address ? address.port : config.API_PORT;
  const urls = await urlsToTry(api, service.store!);
  const width = Math.max(...urls.map((u) => u.what.length));
  process.stdout.write(
    `\nStacks read API on http://${host}:${port} — try:\n` +
      urls.map((u) => `  ${u.what.padEnd(width)}  http://${host}:${port}${u.path}`).join('\n') +
      '\n\n',
  );
  return service;
}
