import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { DEPRECATION_WARNING, EXPOSED_HEADERS } from '../../src/api/plugins/conventions.js';
import { openDatabase } from '../../src/store/db.js';
import { migrate } from '../../src/store/migrate.js';
import { Store } from '../../src/store/store.js';
import { addressOf, transferWithEvent } from '../support/chain.js';
import { connectTestDatabase, stopOwnCluster } from '../support/database.js';
import { testEngines } from '../support/engines.js';
import { freePort, startPostgres } from '../support/postgres.js';
import { API_VERSION, get, startTestApi, withApi, type TestApi } from '../support/api.js';

after(stopOwnCluster);

const UNKNOWN = '0x' + 'ab'.repeat(32);
const REVALIDATE = 'public, no-cache, must-revalidate';
const UNAVAILABLE = {
  statusCode: 503,
  error: 'Service Unavailable',
  message: 'The database service is unavailable',
};

/** A transfer of 1000 µSTX, with its stx transfer event for when it is mined. */
const transfer = (nonce: number) =>
  transferWithEvent({ from: 'alice', to: addressOf('bob'), amount: 1000, fee: 180, nonce });

/** A chain of two blocks, the second holding a tx, and one pending mempool tx. */
async function smallChain(api: TestApi) {
  await api.chain.block();
  const mined = await transfer(0);
  const block = await api.chain.block({ txs: [mined] });
  const pending = await transfer(1);
  await api.chain.mempool([pending.tx]);
  return { mined: mined.tx, pending, block };
}

/** Timed GET: the answer and how long it took. */
async function timedGet(app: FastifyInstance, url: string) {
  const started = performance.now();
  const res = await get(app, url);
  return { res, ms: performance.now() - started };
}

for (const engine of testEngines(import.meta.url)) {
  describe(`HTTP conventions (${engine})`, () => {
    test('HEAD answers every GET route with the same status and headers and no body', async () => {
      await withApi(engine, async (api) => {
        const { mined, block } = await smallChain(api);
        for (const url of [
          `/extended/v1/tx/${mined.txid}`,
          `/extended/v1/tx/multiple?tx_id=${mined.txid}`,
          '/extended/v2/blocks/latest',
          `/extended/v1/block/by_burn_block_height/${block.burn_block_height}`,
          `/extended/v1/tx/${UNKNOWN}`,
        ]) {
          const full = await get(api.app, url);
          const head = await api.app.inject({ method: 'HEAD', url });
          assert.equal(head.statusCode, full.statusCode, url);
          assert.equal(head.body, '', url);
          assert.equal(head.headers['content-type'], full.headers['content-type'], url);
          assert.equal(head.headers['content-length'], String(Buffer.byteLength(full.body)), url);
          assert.equal(head.headers.etag, full.headers.etag, url);
          assert.equal(head.headers['x-api-version'], API_VERSION, url);
        }
      });
    });

    test('CORS, X-API-Version and Cache-Control on answers of every kind', async () => {
      await withApi(engine, async (api) => {
        const { mined } = await smallChain(api);
        const answers = [
          [`/extended/v1/tx/${mined.txid}`, 200],
          [`/extended/v1/tx/${UNKNOWN}`, 404],
          ['/extended/v1/tx/0x1234', 400],
          ['/extended/v1/nothing-here', 404],
          ['/extended/v1/tx/%zz', 400],
          [`/extended/v1/tx/0x${'a'.repeat(1200)}`, 414],
        ] as const;
        for (const [url, status] of answers) {
          const res = await get(api.app, url, { origin: 'https://explorer.example' });
          assert.equal(res.statusCode, status, url);
          assert.equal(res.headers['access-control-allow-origin'], '*', url);
          assert.equal(res.headers['access-control-expose-headers'], EXPOSED_HEADERS.join(', '), url);
          assert.equal(res.headers['x-api-version'], API_VERSION, url);
          assert.equal(res.headers['cache-control'], status === 200 ? REVALIDATE : 'no-store', url);
          assert.match(String(res.headers['content-type']), /^application\/json/, url);
          assert.equal(res.json().statusCode ?? 200, status, url);
          if (status !== 200) assert.equal(typeof res.json().message, 'string', url);
        }
        assert.deepEqual((await get(api.app, '/extended/v1/nothing-here')).json(), {
          statusCode: 404,
          error: 'Not Found',
          message: 'Route GET:/extended/v1/nothing-here not found',
        });

        const preflight = await api.app.inject({
          method: 'OPTIONS',
          url: '/extended/v2/blocks/latest',
          headers: { origin: 'https://explorer.example', 'access-control-request-method': 'GET' },
        });
        assert.equal(preflight.statusCode, 204);
        assert.equal(preflight.headers['access-control-allow-origin'], '*');
        assert.equal(preflight.headers['access-control-allow-methods'], 'GET, HEAD, OPTIONS');
      });
    });

    test('only 4.9 and 4.10 are deprecated (contract §9): they carry Warning: 299, on errors too', async () => {
      await withApi(engine, async (api) => {
        const { mined, block } = await smallChain(api);
        const sender = addressOf('alice');
        const deprecated = [
          `/extended/v1/address/${sender}/${mined.txid}/with_transfers`,
          `/extended/v1/address/${sender}/${UNKNOWN}/with_transfers`,
          `/extended/v1/block/by_burn_block_height/${block.burn_block_height}`,
          '/extended/v1/block/by_burn_block_height/1',
        ];
        for (const url of deprecated) {
          assert.equal((await get(api.app, url)).headers.warning, DEPRECATION_WARNING, url);
        }
        // balances (4.1), tx by id (4.2) and transactions_with_transfers (4.8) are not, on errors neither
        for (const url of [
          `/extended/v1/address/${sender}/balances`,
          '/extended/v1/address/not-an-address/balances',
          `/extended/v1/tx/${mined.txid}`,
          `/extended/v1/tx/${UNKNOWN}`,
          `/extended/v1/address/${sender}/transactions_with_transfers`,
          `/extended/v1/address/${sender}/transactions_with_transfers?limit=0`,
          `/extended/v1/tx/multiple?tx_id=${mined.txid}`,
          '/extended/v2/blocks/latest',
        ]) {
          const res = await get(api.app, url);
          assert.equal(res.headers.warning, undefined, url);
          assert.ok(res.statusCode === 200 || (res.statusCode >= 400 && res.statusCode < 500), url);
        }
      });
    });

    test('tx ETag: 304 with no body for the current tag; a new tag once the mempool tx is mined', async () => {
      await withApi(engine, async (api) => {
        const { pending } = await smallChain(api);
        const url = `/extended/v1/tx/${pending.tx.txid}`;
        const first = await get(api.app, url);
        assert.equal(first.statusCode, 200);
        assert.equal(first.json().tx_status, 'pending');
        const tag = String(first.headers.etag);
        assert.match(tag, /^"[0-9a-f]{64}"$/);
        assert.equal(first.headers['cache-control'], REVALIDATE);

        for (const ifNoneMatch of [tag, `W/${tag}`, `"other", ${tag}`, tag.slice(1, -1)]) {
          const cached = await get(api.app, url, { 'if-none-match': ifNoneMatch });
          assert.equal(cached.statusCode, 304, ifNoneMatch);
          assert.equal(cached.body, '', ifNoneMatch);
          assert.equal(cached.headers.etag, undefined, ifNoneMatch);
          assert.equal(cached.headers['cache-control'], REVALIDATE, ifNoneMatch);
        }
        assert.equal((await get(api.app, url, { 'if-none-match': '"stale"' })).statusCode, 200);
        // Other query parameters are other resources, with their own answers.
        assert.equal((await get(api.app, `${url}?event_limit=5`)).headers.etag, tag);

        await api.chain.block({ txs: [pending] });
        const mined = await get(api.app, url, { 'if-none-match': tag });
        assert.equal(mined.statusCode, 200);
        assert.equal(mined.json().tx_status, 'success');
        assert.notEqual(mined.headers.etag, tag);
        assert.equal(
          (await get(api.app, url, { 'if-none-match': String(mined.headers.etag) })).statusCode,
          304,
        );
        // Later answers come from memory (the cached answer with its own tag, test/api/cached-tx-answers.test.ts):
        // the same bytes and the same tag as the answer built from the row.
        for (let round = 0; round < 2; round += 1) {
          const cached = await get(api.app, url);
          assert.equal(cached.statusCode, 200);
          assert.equal(cached.body, mined.body);
          assert.equal(cached.headers.etag, mined.headers.etag);
          assert.equal(
            (await get(api.app, url, { 'if-none-match': String(mined.headers.etag) })).statusCode,
            304,
          );
        }

        // tx/multiple: tagged from the rows it reads as well.
        const multipleUrl = `/extended/v1/tx/multiple?tx_id=${pending.tx.txid},${UNKNOWN}`;
        const multiple = await get(api.app, multipleUrl);
        assert.equal(multiple.statusCode, 200);
        const multipleTag = String(multiple.headers.etag);
        const again = await get(api.app, multipleUrl, { 'if-none-match': multipleTag });
        assert.equal(again.statusCode, 304);
        assert.equal(again.body, '');
      });
    });

    test('chain-tip ETags change when the tip moves (a block, a microblock)', async () => {
      await withApi(engine, async (api) => {
        const { block } = await smallChain(api);
        // A block hash or index block hash is tagged too (upstream tags index hashes only: both are 64 hex
        // digits, so telling them apart would cost the read the tag saves; deliberate-differences.ts, "ETags"):
        // whether the block it names is canonical changes only with the tip, so the tag is the tip and the hash.
        const urls = [
          '/extended/v2/blocks/latest',
          '/extended/v2/blocks/1',
          `/extended/v2/blocks/${block.block_hash}`,
          `/extended/v2/blocks/${block.index_block_hash.slice(2).toUpperCase()}`,
          `/extended/v1/block/by_burn_block_height/${block.burn_block_height}`,
        ];
        const tags = new Map<string, string>();
        for (const url of urls) {
          const res = await get(api.app, url);
          assert.equal(res.statusCode, 200, url);
          tags.set(url, String(res.headers.etag));
          const cached = await get(api.app, url, { 'if-none-match': tags.get(url)! });
          assert.equal(cached.statusCode, 304, url);
          assert.equal(cached.body, '', url);
        }
        const tip = (await get(api.app, '/extended/v2/blocks/latest')).json().index_block_hash as string;
        assert.equal(tags.get(urls[2]), `"${tip}:${block.block_hash}"`);
        // unprefixed and in capitals, the same block under the same tag as its lower-case 0x form
        assert.equal(tags.get(urls[3]), `"${tip}:${block.index_block_hash}"`);

        const next = await api.chain.block();
        for (const url of urls) {
          const res = await get(api.app, url, { 'if-none-match': tags.get(url)! });
          assert.equal(res.statusCode, 200, url);
          assert.notEqual(res.headers.etag, tags.get(url), url);
          tags.set(url, String(res.headers.etag));
        }
        assert.equal((await get(api.app, '/extended/v2/blocks/latest')).json().height, next.height);

        // A microblock moves the chain tip of v1 blocks: upstream keys it on the microblock hash.
        const microblock = await api.chain.microblock({ txs: [await transfer(1)] });
        const url = `/extended/v1/block/by_burn_block_height/${block.burn_block_height}`;
        const res = await get(api.app, url, { 'if-none-match': tags.get(url)! });
        assert.equal(res.statusCode, 200);
        assert.equal(res.headers.etag, `"${microblock.hash}"`);
      });
    });

    test('blocks routes: malformed heights and hashes are 400s or 404s that say why', async () => {
      await withApi(engine, async (api) => {
        const { block } = await smallChain(api);
        const hex = block.index_block_hash.slice(2);
        // one message for every form it refuses, the value quoted back
        const disguised = (value: string) =>
          'path parameter height_or_hash must be a block height (a whole number, 0 or more, in decimal), ' +
          `a block hash or index block hash (64 hex digits, 0x optional), or "latest"; got "${value}"`;
        const cases: [string, number, string][] = [
          ['/extended/v2/blocks/not-a-block', 400, disguised('not-a-block')],
          ['/extended/v2/blocks/1.5', 400, disguised('1.5')],
          ['/extended/v2/blocks/LATEST', 400, disguised('LATEST')],
          ['/extended/v2/blocks/-1', 400, disguised('-1')],
          ['/extended/v2/blocks/99999999999999999999', 404, 'Block not found'],
          ['/extended/v2/blocks/2147483648', 404, 'Block not found'],
          ['/extended/v2/blocks/1000', 404, 'Block not found'],
          [`/extended/v2/blocks/0X${hex}`, 400, disguised(`0X${hex}`)],
          [`/extended/v2/blocks/0x${hex}0`, 400, disguised(`0x${hex}0`)],
          [`/extended/v2/blocks/0x${hex.slice(1)}`, 400, disguised(`0x${hex.slice(1)}`)],
          ['/extended/v2/blocks/0x10', 400, disguised('0x10')],
          ['/extended/v2/blocks/1e3', 400, disguised('1e3')],
          ['/extended/v2/blocks/+1', 400, disguised('+1')],
          ['/extended/v2/blocks/%20', 400, disguised(' ')],
          [`/extended/v2/blocks/0x${'0'.repeat(64)}`, 404, 'Block not found'],
          [
            `/extended/v2/blocks/0x${'a'.repeat(1200)}`,
            414,
            'a path parameter is longer than 1000 characters',
          ],
          [
            '/extended/v1/block/by_burn_block_height/abc',
            400,
            'path parameter burn_block_height must be a whole number; got "abc"',
          ],
          [
            '/extended/v1/block/by_burn_block_height/1.5',
            400,
            'path parameter burn_block_height must be a whole number; got "1.5"',
          ],
          [
            '/extended/v1/block/by_burn_block_height/-1',
            400,
            'path parameter burn_block_height must be 0 or more; got -1',
          ],
          [
            '/extended/v1/block/by_burn_block_height/0x65',
            400,
            'path parameter burn_block_height must be a whole number written in decimal digits; got "0x65"',
          ],
          [
            '/extended/v1/block/by_burn_block_height/1e2',
            400,
            'path parameter burn_block_height must be a whole number written in decimal digits; got "1e2"',
          ],
          [
            '/extended/v1/block/by_burn_block_height/99999999999999999999',
            404,
            'cannot find block by height',
          ],
          ['/extended/v1/block/by_burn_block_height/5', 404, 'cannot find block by height'],
        ];
        for (const [url, status, message] of cases) {
          const res = await get(api.app, url);
          assert.equal(res.statusCode, status, url.slice(0, 100));
          assert.equal(res.json().message, message, url.slice(0, 100));
        }
        // The accepted forms, and unknown query keys, still work.
        for (const url of [
          '/extended/v2/blocks/2',
          `/extended/v2/blocks/${block.block_hash}`,
          `/extended/v2/blocks/${hex}`,
          `/extended/v2/blocks/0x${hex.toUpperCase()}`,
          '/extended/v2/blocks/latest?foo=bar',
          `/extended/v1/block/by_burn_block_height/${block.burn_block_height}?foo=bar`,
        ]) {
          const res = await get(api.app, url);
          assert.equal(res.statusCode, 200, url);
          assert.equal(res.json().height, 2, url);
        }
      });
    });
  });
}

describe('database unreachable', () => {
  // The bounds below separate failing at once from waiting for something: a connect timeout (set long here,
  // so that a 503 in time cannot come from it) or postgres.js's reconnection back-off (up to 20 s by default).
  // They are generous because a loaded 2-core machine stretches every request (1.8 s seen at load 30).
  test('a port nothing listens on: 503 with the JSON error body, at once, not after a timeout', async () => {
    const port = await freePort();
    const db = await openDatabase({
      url: `postgres://postgres@127.0.0.1:${port}/none`,
      pgliteDir: '',
      poolMax: 1,
      connectTimeoutMs: 60_000,
    });
    const { app } = await startTestApi({ store: new Store(db) });
    try {
      for (const url of [
        `/extended/v1/tx/${UNKNOWN}`,
        '/extended/v2/blocks/latest',
        '/extended/v2/blocks/1',
      ]) {
        const { res, ms } = await timedGet(app, url);
        assert.equal(res.statusCode, 503, url);
        assert.deepEqual(res.json(), UNAVAILABLE, url);
        assert.equal(res.headers['cache-control'], 'no-store', url);
        assert.equal(res.headers.etag, undefined, url);
        assert.equal(res.headers['x-api-version'], API_VERSION, url);
        assert.ok(ms < 10_000, `${url} answered in ${Math.round(ms)} ms`);
      }
    } finally {
      await app.close();
      await db.close();
    }
  });

  test('PostgreSQL stopped under a running server: 503 at once, every time (no back-off piling up)', async () => {
    const pg = await startPostgres();
    let stopped = false;
    const db = await connectTestDatabase(pg.url);
    const { app } = await startTestApi({ store: new Store(db) });
    try {
      await migrate(db.sql);
      const before = await get(app, `/extended/v1/tx/${UNKNOWN}`);
      assert.equal(before.statusCode, 404);

      await pg.stop();
      stopped = true;
      // Repeated requests keep failing fast: reconnection attempts must not pile up delays.
      for (let i = 0; i < 12; i++) {
        const url = i % 2 === 0 ? `/extended/v1/tx/${UNKNOWN}` : `/extended/v1/tx/multiple?tx_id=${UNKNOWN}`;
        const { res, ms } = await timedGet(app, url);
        assert.equal(res.statusCode, 503, url);
        assert.deepEqual(res.json(), UNAVAILABLE);
        assert.ok(ms < 5_000, `request ${i} answered in ${Math.round(ms)} ms`);
      }
    } finally {
      await app.close();
      await db.close().catch(() => {});
      if (!stopped) await pg.stop();
    }
  });
});
