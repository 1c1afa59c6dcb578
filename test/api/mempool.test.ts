import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { ClarityVersion } from '@stacks/transactions';
import {
  MempoolAggregatesCache,
  roundHalfEven,
  type MempoolAggregates,
} from '../../src/store/read/mempool.js';
import type { Sql } from '../../src/store/db.js';
import { addressOf, callTx, deployTx, transferTx, type BuiltTx, type KeyName } from '../support/chain.js';
import { stopOwnCluster } from '../support/database.js';
import { testEngines } from '../support/engines.js';
import { getJson as get, startTestApi, withApi } from '../support/api.js';

after(stopOwnCluster);

// Real signed testnet transactions, fed through the ingestor as the node would send them.

const RECIPIENT = addressOf('dave');

/** A token transfer `extra` bytes longer than the shortest one (the recipient contract's name grows). */
const transfer = (from: KeyName, nonce: number, fee: number, extra = 1) =>
  transferTx({ from, to: `${RECIPIENT}.${'r'.repeat(extra)}`, amount: 1, fee, nonce });

const call = (from: KeyName, nonce: number, fee: number, extra = 1) =>
  callTx({ from, nonce, fee, contract: `${RECIPIENT}.counter`, fn: 'f'.repeat(extra) });

/** An unversioned contract deploy; `versioned` makes it a versioned smart contract (type 6). */
const deploy = (from: KeyName, nonce: number, fee: number, extra = 1, versioned = false) =>
  deployTx({
    from,
    nonce,
    fee,
    name: `c${nonce}`,
    code: ';'.repeat(extra),
    clarityVersion: versioned ? ClarityVersion.Clarity2 : null,
  });

const p = (p25: number | null, p50: number | null, p75: number | null, p95: number | null) => ({
  p25,
  p50,
  p75,
  p95,
});
const NONE = p(null, null, null, null);
const fees = (no: number, low: number, medium: number, high: number) => ({
  no_priority: no,
  low_priority: low,
  medium_priority: medium,
  high_priority: high,
});

/** PostgreSQL's percentile_cont, for cross-checking the sizes the transactions happen to have. */
function percentileCont(values: number[], fraction: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  const position = fraction * (sorted.length - 1);
  const lo = Math.floor(position);
  const hi = Math.ceil(position);
  return lo === hi ? sorted[lo] : sorted[lo] + (position - lo) * (sorted[hi] - sorted[lo]);
}
const percentilesOf = (values: number[]) =>
  p(...([0.25, 0.5, 0.75, 0.95].map((f) => percentileCont(values, f)) as [number, number, number, number]));

describe('mempool helpers', () => {
  test('fees round like PostgreSQL round(double precision): halves to even', () => {
    assert.deepEqual(
      [0.5, 1.5, 2.5, 1000.5, 1001.5, 1001.9, 855000.0000000001, 2.4999999999999996, 7].map(roundHalfEven),
      [0, 2, 2, 1000, 1002, 1002, 855000, 2, 7],
    );
  });

  /** A cache over a fake computation that returns the given keys in turn and waits for `release`. */
  function fakeCache(keys: string[], staleMs?: number) {
    const pending: (() => void)[] = [];
    let computed = 0;
    const cache = new MempoolAggregatesCache(async () => {
      const key = keys[Math.min(computed++, keys.length - 1)];
      await new Promise<void>((resolve) => pending.push(resolve));
      return { key, mempool_updated_at: key, groups: new Map(), all_fee_rate: NONE } as MempoolAggregates;
    }, staleMs);
    return {
      cache,
      computed: () => computed,
      release: () => pending.splice(0).forEach((resolve) => resolve()),
      /** lets the n-th computation (0-based) finish */
      releaseNth: (n: number) => pending[n](),
    };
  }
  const sql = {} as Sql;
  const tick = () => new Promise((resolve) => setTimeout(resolve, 2));

  test('the aggregates cache computes once per mempool state; concurrent first readers share it', async () => {
    const { cache, computed, release } = fakeCache(['v1', 'v2']);
    const readAt = performance.now();
    const first = cache.get(sql, 'v1', readAt);
    const second = cache.get(sql, 'v1', readAt);
    release();
    assert.equal((await first).key, 'v1');
    assert.equal(await second, await first);
    assert.equal(computed(), 1, 'one computation for two concurrent requests');
    assert.equal((await cache.get(sql, 'v1', performance.now())).key, 'v1');
    assert.equal(computed(), 1, 'served from memory');

    // the mempool changed: the reader that notices waits for the new state...
    const noticing = cache.get(sql, 'v2', performance.now());
    // ...while a concurrent reader gets the previous snapshot (it was current a moment ago)
    assert.equal((await cache.get(sql, 'v2', performance.now())).key, 'v1');
    release();
    assert.equal((await noticing).key, 'v2');
    assert.equal((await cache.get(sql, 'v2', performance.now())).key, 'v2');
    assert.equal(computed(), 2);
  });

  test('a snapshot that stopped being current too long ago is not served: readers wait', async () => {
    const { cache, release } = fakeCache(['v1', 'v2'], 0);
    const first = cache.get(sql, 'v1', performance.now());
    release();
    await first;
    await tick();
    const noticing = cache.get(sql, 'v2', performance.now());
    const concurrent = cache.get(sql, 'v2', performance.now());
    release();
    assert.equal((await noticing).key, 'v2');
    assert.equal((await concurrent).key, 'v2');
  });

  test('while an older computation runs, a recent snapshot is served instead of starting another', async () => {
    const { cache, computed, release, releaseNth } = fakeCache(['v1', 'v2', 'v3']);
    const first = cache.get(sql, 'v1', performance.now());
    release();
    await first;
    const noticing = cache.get(sql, 'v2', performance.now());
    await tick();
    // the mempool changed again after that computation was sent
    assert.equal((await cache.get(sql, 'v3', performance.now())).key, 'v1');
    assert.equal(computed(), 2, 'no second computation in flight');
    releaseNth(0);
    assert.equal((await noticing).key, 'v2');
    const next = cache.get(sql, 'v3', performance.now());
    release();
    assert.equal((await next).key, 'v3');
    assert.equal(computed(), 3);
  });

  test('a computation sent before a reader saw its state is not reused for it', async () => {
    const { cache, computed, releaseNth } = fakeCache(['v1', 'v2']);
    const older = cache.get(sql, 'v1', performance.now());
    await tick();
    const newer = cache.get(sql, 'v2', performance.now());
    assert.equal(computed(), 2, 'the later reader does not join the earlier computation');
    releaseNth(1);
    assert.equal((await newer).key, 'v2');
    releaseNth(0);
    assert.equal((await older).key, 'v1');
    // the earlier computation finished last, but the snapshot sent later is the one cached
    assert.equal((await cache.get(sql, 'v2', 0)).key, 'v2');
    assert.equal(computed(), 2);
  });
});

for (const engine of testEngines(import.meta.url)) {
  describe(`mempool statistics and fee priorities (${engine})`, () => {
    test('an empty mempool: zero counts, null percentiles, zero fees', async () => {
      await withApi(engine, async ({ app }) => {
        const stats = await get(app, '/extended/v1/tx/mempool/stats');
        assert.equal(stats.status, 200);
        const perType = <T>(v: T) => ({
          token_transfer: v,
          smart_contract: v,
          contract_call: v,
          poison_microblock: v,
        });
        assert.deepEqual(stats.body, {
          tx_type_counts: perType(0),
          tx_simple_fee_averages: perType(NONE),
          tx_ages: perType(NONE),
          tx_byte_sizes: perType(NONE),
        });
        const feesRes = await get(app, '/extended/v2/mempool/fees');
        assert.equal(feesRes.status, 200);
        assert.deepEqual(feesRes.body, { all: fees(0, 0, 0, 0) });
        assert.match(String(stats.headers.etag), /^"\d+(\.\d+)?"$/);
      });
    });

    test('NOTES §E stats scenario: one tx of each type received at tips 1..5', async () => {
      await withApi(engine, async ({ app, chain }) => {
        const sizes = { transfer: [] as number[], call: [] as number[], contract: [] as number[] };
        for (let i = 1; i <= 5; i++) {
          await chain.block();
          const txs = [
            await transfer('alice', i, 100 * i, i),
            await call('bob', i, 200 * i, i),
            await deploy('carol', i, 300 * i, i),
          ];
          sizes.transfer.push((txs[0].raw.length - 2) / 2);
          sizes.call.push((txs[1].raw.length - 2) / 2);
          sizes.contract.push((txs[2].raw.length - 2) / 2);
          await chain.mempool(txs);
        }
        // each type's sizes are consecutive, as the scenario's i / i+10 / i+20 bytes
        assert.deepEqual(sizes.transfer, [182, 183, 184, 185, 186]);
        assert.deepEqual(sizes.call, [151, 152, 153, 154, 155]);
        assert.deepEqual(sizes.contract, [124, 125, 126, 127, 128]);

        const res = await get(app, '/extended/v1/tx/mempool/stats');
        assert.equal(res.status, 200);
        assert.deepEqual(res.body, {
          tx_type_counts: { token_transfer: 5, smart_contract: 5, contract_call: 5, poison_microblock: 0 },
          tx_simple_fee_averages: {
            token_transfer: p(200, 300, 400, 480),
            smart_contract: p(600, 900, 1200, 1440),
            contract_call: p(400, 600, 800, 960),
            poison_microblock: NONE,
          },
          tx_ages: {
            token_transfer: p(2, 3, 4, 4.8),
            smart_contract: p(2, 3, 4, 4.8),
            contract_call: p(2, 3, 4, 4.8),
            poison_microblock: NONE,
          },
          tx_byte_sizes: {
            token_transfer: p(183, 184, 185, 185.8),
            smart_contract: p(125, 126, 127, 127.8),
            contract_call: p(152, 153, 154, 154.8),
            poison_microblock: NONE,
          },
        });
        assert.deepEqual(res.body.tx_byte_sizes.token_transfer, percentilesOf(sizes.transfer));
        assert.deepEqual(res.body.tx_byte_sizes.contract_call, percentilesOf(sizes.call));
        assert.deepEqual(
          Object.keys(res.body.tx_ages),
          ['token_transfer', 'smart_contract', 'contract_call', 'poison_microblock'],
          'key order',
        );

        // ages count from the tip: one more block, every age grows by one
        await chain.block();
        const older = await get(app, '/extended/v1/tx/mempool/stats');
        assert.deepEqual(older.body.tx_ages.token_transfer, p(3, 4, 5, 5.8));
      });
    });

    test('NOTES §E fee scenario: fees 100000·i, calls for i < 3, contracts 3..5, transfers 6..9', async () => {
      await withApi(engine, async ({ app, chain }) => {
        await chain.block();
        const txs: BuiltTx[] = [];
        for (let i = 0; i < 10; i++) {
          const fee = 100_000 * i;
          if (i < 3) txs.push(await call('alice', i, fee));
          else if (i < 6) txs.push(await deploy('bob', i, fee));
          else txs.push(await transfer('carol', i, fee));
        }
        await chain.mempool(txs);
        const res = await get(app, '/extended/v2/mempool/fees');
        assert.equal(res.status, 200);
        assert.deepEqual(res.body, {
          all: fees(225000, 450000, 675000, 855000),
          token_transfer: fees(675000, 750000, 825000, 885000),
          contract_call: fees(50000, 100000, 150000, 190000),
          smart_contract: fees(350000, 400000, 450000, 490000),
        });
        assert.deepEqual(Object.keys(res.body), ['all', 'token_transfer', 'contract_call', 'smart_contract']);
      });
    });

    test('a type without pending txs is left out of the fees; versioned contracts count as smart contracts', async () => {
      await withApi(engine, async ({ app, chain }) => {
        await chain.block();
        await chain.mempool([
          await transfer('alice', 0, 1000),
          await transfer('bob', 0, 2001),
          await deploy('carol', 0, 5000, 1, true),
        ]);
        const feesRes = await get(app, '/extended/v2/mempool/fees');
        // p25 of 1000/2001/5000 is 1500.5: round half to even gives 1500
        assert.deepEqual(feesRes.body, {
          all: fees(1500, 2001, 3500, 4700),
          token_transfer: fees(1250, 1500, 1751, 1951),
          smart_contract: fees(5000, 5000, 5000, 5000),
        });
        const stats = await get(app, '/extended/v1/tx/mempool/stats');
        assert.deepEqual(stats.body.tx_type_counts, {
          token_transfer: 2,
          smart_contract: 1,
          contract_call: 0,
          poison_microblock: 0,
        });
        assert.deepEqual(stats.body.tx_simple_fee_averages.token_transfer, percentilesOf([1000, 2001]));
      });
    });

    test('only pending txs count; ETag follows the mempool, 304 while unchanged; every API process sees changes', async () => {
      await withApi(engine, async ({ store, app, chain }) => {
        const other = (await startTestApi({ store })).app;
        try {
          await chain.block();
          const a = await transfer('alice', 0, 100);
          const b = await transfer('bob', 0, 200);
          const c = await call('carol', 0, 300);
          await chain.mempool([a, b, c]);

          const first = await get(app, '/extended/v1/tx/mempool/stats');
          assert.equal(first.body.tx_type_counts.token_transfer, 2);
          assert.equal((await get(other, '/extended/v2/mempool/fees')).body.all.high_priority, 290);
          const tag = String(first.headers.etag);
          assert.equal(first.headers['cache-control'], 'public, no-cache, must-revalidate');
          const fees1 = await get(app, '/extended/v2/mempool/fees');
          assert.equal(fees1.headers.etag, tag, 'stats and fees share the mempool ETag');

          const unchanged = await app.inject({
            method: 'GET',
            url: '/extended/v1/tx/mempool/stats',
            headers: { 'if-none-match': tag },
          });
          assert.equal(unchanged.statusCode, 304);
          assert.equal(unchanged.body, '');

          // the node drops one, a block mines another: both leave the pending set
          await chain.drop([b.txid]);
          await chain.block({ txs: [{ tx: c }] });
          for (const api of [app, other]) {
            const stats = await get(api, '/extended/v1/tx/mempool/stats', { 'if-none-match': tag });
            assert.equal(stats.status, 200);
            assert.notEqual(stats.headers.etag, tag);
            assert.deepEqual(stats.body.tx_type_counts, {
              token_transfer: 1,
              smart_contract: 0,
              contract_call: 0,
              poison_microblock: 0,
            });
            assert.deepEqual(stats.body.tx_simple_fee_averages.token_transfer, p(100, 100, 100, 100));
            assert.deepEqual(stats.body.tx_ages.token_transfer, p(2, 2, 2, 2));
            assert.deepEqual((await get(api, '/extended/v2/mempool/fees')).body, {
              all: fees(100, 100, 100, 100),
              token_transfer: fees(100, 100, 100, 100),
            });
          }
        } finally {
          await other.close();
        }
      });
    });

    test('unknown query parameters are ignored', async () => {
      await withApi(engine, async ({ app }) => {
        assert.equal((await get(app, '/extended/v1/tx/mempool/stats?foo=1')).status, 200);
        assert.equal((await get(app, '/extended/v2/mempool/fees?bar=x')).status, 200);
      });
    });
  });
}
