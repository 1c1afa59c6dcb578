import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startTestApi, type TestApi } from '../support/api.js';
import { stopOwnCluster } from '../support/database.js';

// The mempool lists (docs/upstream.md C.7, C.8) through the API, on the generated chain, which ends with a live
// mempool. Not in the goldens (their order follows receipt times an import takes from the clock): checked
// against the original's documented order, filters, totals and errors.

after(stopOwnCluster);

interface MempoolTx {
  tx_id: string;
  tx_status: string;
  sender_address: string;
  fee_rate: string;
  receipt_time: number;
  tx_type: string;
  token_transfer?: { recipient_address: string };
  contract_call?: { contract_id: string; function_args?: unknown };
}

interface Page {
  limit: number;
  offset: number;
  total: number;
  results: MempoolTx[];
}

describe('the mempool lists (postgres)', () => {
  let api: TestApi;
  const get = async (url: string) => {
    const response = await api.app.inject({ method: 'GET', url });
    return { status: response.statusCode, body: JSON.parse(response.body) as Page & { message?: string } };
  };
  /** Every pending tx, newest received first (the page size is the mempool's bound here). */
  let all: MempoolTx[];

  before(async () => {
    api = await startTestApi({ engine: 'postgres', fixture: 'generated/gen-small' });
    const first = await get('/extended/v1/tx/mempool?limit=50');
    all = first.body.results;
    for (let offset = 50; offset < first.body.total; offset += 50) {
      all.push(...(await get(`/extended/v1/tx/mempool?limit=50&offset=${offset}`)).body.results);
    }
  });
  after(() => api?.close());

  test('lists every pending tx once, as pending, newest received first; total is the pending count', async () => {
    const { status, body } = await get('/extended/v1/tx/mempool');
    assert.equal(status, 200);
    assert.ok(body.total >= 10, `a live mempool: ${body.total} pending`);
    assert.equal(all.length, body.total);
    assert.equal(new Set(all.map((t) => t.tx_id)).size, all.length);
    assert.deepEqual(body.results, all.slice(0, 20));
    assert.deepEqual([body.limit, body.offset], [20, 0]);
    const second = (await get('/extended/v1/tx/mempool?limit=5&offset=5')).body;
    assert.deepEqual(second.results, all.slice(5, 10));
    assert.ok(all.every((t) => t.tx_status === 'pending'));
    for (let i = 1; i < all.length; i++) assert.ok(all[i - 1].receipt_time >= all[i].receipt_time, `${i}`);
    // past the end: no rows, the pending count kept
    const past = await get(`/extended/v1/tx/mempool?offset=${body.total}`);
    assert.deepEqual([past.body.total, past.body.results.length], [body.total, 0]);
  });

  test('order_by=fee sorts by fee, order=asc reverses', async () => {
    const byFee = (await get('/extended/v1/tx/mempool?order_by=fee&order=asc&limit=50')).body.results;
    const fees = byFee.map((t) => BigInt(t.fee_rate));
    for (let i = 1; i < fees.length; i++)
      assert.ok(fees[i - 1] <= fees[i], `${i}: ${fees[i - 1]} > ${fees[i]}`);
    const lowest = [...all].map((t) => BigInt(t.fee_rate)).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    assert.deepEqual(fees, lowest.slice(0, fees.length));
  });

  test('sender_address keeps what the principal sends; address, what it sends, receives, deploys or calls', async () => {
    const sender = all[0].sender_address;
    const sent = (await get(`/extended/v1/tx/mempool?sender_address=${sender}&limit=50`)).body;
    const expected = all.filter((t) => t.sender_address === sender);
    assert.deepEqual(
      sent.results.map((t) => t.tx_id),
      expected.map((t) => t.tx_id),
    );
    assert.equal(sent.total, expected.length);
    const involved = all.filter(
      (t) =>
        t.sender_address === sender ||
        t.token_transfer?.recipient_address === sender ||
        t.contract_call?.contract_id === sender,
    );
    const byAddress = (await get(`/extended/v1/tx/mempool?address=${sender}&limit=50`)).body;
    assert.deepEqual(
      byAddress.results.map((t) => t.tx_id),
      involved.map((t) => t.tx_id),
    );
    // the principal's own list is the same list
    const own = (await get(`/extended/v1/address/${sender}/mempool?limit=50`)).body;
    assert.deepEqual(own, byAddress);
    // exclude_function_args leaves the arguments out
    const call = all.find((t) => t.contract_call);
    assert.ok(call, 'a pending contract call');
    const bare = (await get('/extended/v1/tx/mempool?limit=50&exclude_function_args=true')).body.results;
    assert.ok(bare.every((t) => t.contract_call?.function_args === undefined));
  });

  test('bad filters are a 400 with the project body', async () => {
    const sender = all[0].sender_address;
    const both = await get(`/extended/v1/tx/mempool?address=${sender}&sender_address=${sender}`);
    assert.equal(both.status, 400);
    assert.equal(both.body.message, 'The "address" filter cannot be specified with other address filters');
    const badOrder = await get('/extended/v1/tx/mempool?order_by=weight');
    assert.equal(badOrder.status, 400);
    assert.match(badOrder.body.message!, /order_by/);
    const badPrincipal = await get('/extended/v1/address/not-a-principal/mempool');
    assert.equal(badPrincipal.status, 400);
    assert.match(badPrincipal.body.message!, /principal/);
    assert.equal((await get('/extended/v1/tx/mempool?limit=51')).status, 400);
  });
});
