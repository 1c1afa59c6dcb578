import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { caches } from '../../src/caches.js';
import { c32Address } from '../../src/chain/c32.js';
import { settings } from '../../src/settings.js';
import { startTestApi } from '../support/api.js';
import { stopOwnCluster } from '../support/database.js';
import { walkUrls } from '../support/pipelined-get.js';
import { fixtureMessages } from '../support/shared.js';

// Cached answers must hold what they count, and all of them together at most CACHE_MAX_MB
// (src/caches.ts). A client walks 200,000 distinct valid URLs over HTTP (balances, account
// listings and contract statuses of made-up principals: small answers, every one cached when made), against the
// API in this process with CACHE_MAX_MB=8, and what the process retains (after a full GC) and its RSS are
// compared before and after. Before: each small answer cached was a slice of an 8 KB buffer slab and pinned it,
// while the routes counted its length (measured here: retained +68 MB, RSS +156 MB, for "8 MB per route").
// The bound documented (README, docs/deploy.md): RSS grows by at most 4 × CACHE_MAX_MB beyond the working
// memory of a loaded server; measured here +59 MB with CACHE_MAX_MB=8 (+17 MB with 1), retained +5 MB.

after(stopOwnCluster);

const MB = 1024 * 1024;
const CACHE_MAX_MB = 8;
const WALK = 200_000;
/** what a loaded server grows by with (almost) nothing cached: 17 MB measured, with margin */
const WORKING_MEMORY_MB = 64;

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

/** RSS, and what the process retains (V8 heap in use and array buffers) after a full GC, in MB. */
function memory() {
  gc();
  gc();
  const m = process.memoryUsage();
  return { rss: m.rss / MB, retained: (m.heapUsed + m.arrayBuffers) / MB };
}

test(`${WALK.toLocaleString('en')} distinct URLs: the caches hold at most CACHE_MAX_MB, and RSS stays within its documented bound`, async () => {
  const api = await startTestApi({
    engine: 'postgres',
    listen: true,
    cacheMaxBytes: CACHE_MAX_MB * MB,
    mainnet: false,
  });
  try {
    for (const m of fixtureMessages('mocknet').slice(0, 40)) await api.ingestor.take(m.path, m.payload);
    const hash = Buffer.alloc(20);
    const principal = (i: number) => {
      hash.writeUInt32BE(i, 0);
      return c32Address(26, hash);
    };
    const routes = [
      (p: string) => `/extended/v1/address/${p}/balances`,
      (p: string) => `/extended/v1/address/${p}/transactions_with_transfers`,
      (p: string) => `/extended/v2/smart-contracts/status?contract_id=${p}.c`,
      (p: string) => `/extended/v1/address/${p}/balances?unanchored=false`,
    ];
    const url = (i: number) => routes[i % routes.length](principal(i >> 2));
    const server = { host: '127.0.0.1', port: Number(new URL(api.baseUrl).port) };
    // The same work first, without caching anything (a HEAD answer is never cached): the server reaches the
    // working memory of this load before it is measured.
    assert.deepEqual(await walkUrls(10_000, (i) => url(1e8 + i), { ...server, method: 'HEAD' }), {
      200: 10_000,
    });
    const before = memory();
    assert.deepEqual(await walkUrls(WALK, url, server), { 200: WALK });
    const walked = memory();

    const counted = caches.bytes / MB;
    assert.ok(counted <= CACHE_MAX_MB, `the caches count ${counted.toFixed(1)} MB`);
    assert.ok(counted >= CACHE_MAX_MB / 2, `the walk filled them: ${counted.toFixed(1)} MB`);
    const retained = walked.retained - before.retained;
    const rss = walked.rss - before.rss;
    console.log(
      `cache memory: ${WALK} distinct URLs, CACHE_MAX_MB=${CACHE_MAX_MB}: counted ${counted.toFixed(1)} MB, ` +
        `retained +${retained.toFixed(1)} MB, RSS ${before.rss.toFixed(0)} -> ${walked.rss.toFixed(0)} MB`,
    );
    assert.ok(
      retained <= 2 * CACHE_MAX_MB,
      `retained +${retained.toFixed(1)} MB: more than the caches count`,
    );
    assert.ok(
      rss <= 4 * CACHE_MAX_MB + WORKING_MEMORY_MB,
      `RSS +${rss.toFixed(0)} MB, over 4 × CACHE_MAX_MB + ${WORKING_MEMORY_MB} MB`,
    );
  } finally {
    await api.close();
    caches.setBound(settings.CACHE_MAX_MB.default * MB);
  }
});
