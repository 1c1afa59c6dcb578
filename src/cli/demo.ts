import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { IN_PROCESS_CLIENT } from '../api/plugins/access-control.js';
import type { Config } from '../config.js';
import {
  defaultNakamotoHeight,
  generateChain,
  type GenerateOptions,
  type GenerateReport,
} from '../devnet/chain.js';
import { idsToTry, isEmptyIndex, unfinishedDemoChain } from '../store/read/demo.js';
import type { Store } from '../store/store.js';
import { demoChainCompleted, demoChainStarted } from '../store/write/demo-chain.js';
import { MEMPOOL_GC_BLOCKS, MEMPOOL_GC_MINUTES } from '../store/write/mempool.js';
import { generationProgress } from './progress.js';
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
 * nothing was ever indexed, or if an earlier start was stopped while indexing it (the messages it applied
 * are skipped as duplicates: the generator writes the same chain again). Returns the generator's report,
 * or null when the database already had data. Stops between two messages once `signal` is aborted,
 * throwing its reason.
 * @internal exported for the tests, which index the demo chain without serving it
 */
export async function seedDemoChain(
  store: Store,
  config: Config,
  logger: Logger,
  options: { chain?: Omit<GenerateOptions, 'onProgress'>; showProgress?: boolean; signal?: AbortSignal } = {},
): Promise<GenerateReport | null> {
  const chain = options.chain ?? DEMO_CHAIN;
  const unfinished = await unfinishedDemoChain(store.sql);
  if (unfinished) {
    logger.info(
      { height: unfinished.tipHeight, blocks: unfinished.blocks },
      `the demo chain was stopped at height ${unfinished.tipHeight} of ${unfinished.blocks} by an earlier start: ` +
        'indexing the rest (what was indexed is skipped)',
    );
  } else if (await isEmptyIndex(store.sql)) {
    logger.info(
      { blocks: chain.blocks, accounts: chain.accounts },
      'empty database: indexing a generated demo chain',
    );
  } else {
    return null;
  }
  await demoChainStarted(store.sql, chain.blocks);
  const ingestor = createIngestor(store, config, logger);
  const bar = options.showProgress ? generationProgress('demo chain', chain.blocks) : undefined;
  let height = 0;
  const generated = {
    mempoolGcBlocks: MEMPOOL_GC_BLOCKS,
    mempoolGcMinutes: MEMPOOL_GC_MINUTES,
    ...chain,
    onProgress: (progress: { height: number; txs: number }) => {
      height = progress.height;
      bar?.onProgress(progress);
    },
  };
  let report: GenerateReport | undefined;
  try {
    report = await generateChain(generated, async (message) => {
      options.signal?.throwIfAborted();
      await ingestor.take(message.path, message.payload, message.receivedAt);
    });
    // the tables' statistics, if an ANALYZE was due, are fresh before the API answers from them
    await ingestor.settled();
  } catch (err) {
    if (options.signal?.aborted && err === options.signal.reason) {
      logger.info(
        { height, blocks: chain.blocks },
        `demo chain stopped at height ${height} of ${chain.blocks}: the next start indexes the rest`,
      );
    }
    throw err;
  } finally {
    bar?.stop(report);
  }
  await demoChainCompleted(store.sql);
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

/**
 * Paths worth trying on this database, kept only if the running API answers them with 200. Asked as the
 * process itself: outside access control, so checking them spends nothing of anyone's rate limit.
 * @internal exported for its tests
 */
export async function urlsToTry(
  api: FastifyInstance,
  store: Store,
): Promise<{ what: string; path: string }[]> {
  const ids = await idsToTry(store.sql);
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
    const ask = (at: string) => api.inject({ method: 'GET', url: at, remoteAddress: IN_PROCESS_CLIENT });
    let response = await ask(url);
    // a docs page may redirect once (e.g. to its index): print where it lands
    const location = response.headers.location;
    if (response.statusCode >= 300 && response.statusCode < 400 && typeof location === 'string') {
      url = new URL(location, `http://localhost${path}`).pathname;
      response = await ask(url);
    }
    if (response.statusCode === 200) urls.push({ what, path: url });
  }
  return urls;
}

/**
 * What the service's rate limits mean for someone trying the API from this machine, and how to change
 * them (the demo is throttled like production: the docs page is free, the requests its "Try it out"
 * sends are not).
 * @internal exported for the README's test
 */
export function rateLimitNote(
  config: Pick<
    Config,
    'RATE_LIMIT_ENABLED' | 'RATE_LIMIT_ANON_PER_MIN' | 'RATE_LIMIT_KEY_PER_MIN' | 'API_KEYS_REQUIRED'
  >,
): string {
  if (!config.RATE_LIMIT_ENABLED) return 'Rate limits are off (RATE_LIMIT_ENABLED=false).';
  const anonymous = config.API_KEYS_REQUIRED
    ? 'an API key is required (API_KEYS_REQUIRED=true)'
    : `${config.RATE_LIMIT_ANON_PER_MIN} requests a minute per client IP without an API key (RATE_LIMIT_ANON_PER_MIN)`;
  return (
    `Rate limits: ${anonymous}, ${config.RATE_LIMIT_KEY_PER_MIN} with one (RATE_LIMIT_KEY_PER_MIN); ` +
    'over the limit, 429 (/doc itself is free; its "Try it out" requests count).\n' +
    'For local use: RATE_LIMIT_ENABLED=false npm start, or raise RATE_LIMIT_ANON_PER_MIN.'
  );
}

/**
 * The text `npm start` prints once the service answers: where it is, what to try, the rate limits.
 * @internal exported for the README's test
 */
export function startBanner(config: Config, base: string, urls: { what: string; path: string }[]): string {
  const width = Math.max(...urls.map((u) => u.what.length));
  return (
    `\nStacks read API on ${base} — try:\n` +
    urls.map((u) => `  ${u.what.padEnd(width)}  ${base}${u.path}`).join('\n') +
    `\n\n${rateLimitNote(config)}\n\n`
  );
}

/**
 * `start`: serve on the configured database (PGlite by default), seeding an empty one with the demo chain.
 * A stop asked for during start-up (`signal`) closes what was opened and throws the signal's reason.
 */
export async function start(config: Config, logger: Logger, signal?: AbortSignal): Promise<RunningService> {
  const service = await serve(config, logger, 'both', {
    signal,
    beforeListen: async (store) => {
      await seedDemoChain(store, config, logger, { showProgress: true, signal });
    },
  });
  const api = service.api!;
  const host = config.API_HOST === '0.0.0.0' || config.API_HOST === '::' ? 'localhost' : config.API_HOST;
  const address = api.server.address();
  const port = typeof address === 'object' && address ? address.port : config.API_PORT;
  const urls = await urlsToTry(api, service.store!);
  process.stdout.write(startBanner(config, `http://${host}:${port}`, urls));
  return service;
}
