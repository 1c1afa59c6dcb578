import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { txByIdRenderings } from '../../src/api/cache/rendered-txs.js';
import { mempoolTransaction, minedTransaction } from '../../src/api/render/txs.js';
import { EVENT_LIMIT_DEFAULT, MAX_MULTIPLE_TX_IDS } from '../../src/api/schemas/params.js';
import { findMempoolTxs, findMinedTxs } from '../../src/store/read/txs.js';
import type { Store } from '../../src/store/store.js';
import type { Engine } from '../../src/store/db.js';
import { get, startTestApi, type TestApi } from '../support/api.js';
import { addressOf, transferWithEvent } from '../support/chain.js';
import { stopOwnCluster } from '../support/database.js';
import { testEngines } from '../support/engines.js';

// "Serialized answers": `/extended/v1/tx/multiple` writes its body by hand (it splices in per-tx JSON cached by
// the rendering cache, which its response schema cannot take), so this proves the bytes are exactly what the
// route's own 200 response schema, through Fastify's compiled serializer, makes of the same answer: for every
// tx of recorded chains (mined, mempool, not found), with each query the route takes, asked one id at a time
// and all at once. A change to either side (the hand-built wrapper or the schema) fails here.

after(stopOwnCluster);

const ROUTE = '/extended/v1/tx/multiple';

/** The route's compiled serializer for its 200 answer, taken from a reply of the route itself. */
type Serialize = (answer: unknown) => string;

/**
 * A generated chain for what the recorded ones lack: each drop reason, and a microblock tx not yet confirmed
 * (beside one mined tx).
 */
async function droppedAndStreamed(engine: Engine): Promise<TestApi> {
  const api = await startTestApi({ engine });
  const { chain } = api;
  const reasons = ['ReplaceByFee', 'ReplaceAcrossFork', 'TooExpensive', 'StaleGarbageCollect', 'Problematic'];
  const transfer = (nonce: number) =>
    transferWithEvent({ from: 'alice', to: addressOf('bob'), amount: 1000, fee: 180, nonce });
  await chain.block({ txs: [await transfer(0)] });
  const dropped = await Promise.all(reasons.map((_, i) => transfer(1 + i)));
  const streamed = await transfer(1 + reasons.length);
  const pending = await transfer(2 + reasons.length);
  await chain.mempool([...dropped, streamed, pending].map((m) => m.tx));
  const replacement = pending.tx.txid;
  for (const [i, reason] of reasons.entries()) {
    await chain.drop([dropped[i]!.tx.txid], reason, reason === 'ReplaceByFee' ? replacement : null);
  }
  await chain.microblock({ txs: [streamed] });
  return api;
}

/**
 * Recorded chains (shared fixtures) with mined txs (orphaned, microblock-streamed, contract calls with events)
 * and mempool txs, and the generated one above.
 */
const CHAINS: { name: string; start: (engine: Engine) => Promise<TestApi> }[] = [
  ...[
    'fuzzed-transactions-1',
    'mainnet-reorg-scenario1',
    'regtest-env-pox-4-stack-stx-in-reward-phase-S1',
  ].map((fixture) => ({ name: fixture, start: (engine: Engine) => startTestApi({ engine, fixture }) })),
  { name: 'dropped and streamed (generated)', start: droppedAndStreamed },
];

/** Each query the route takes that changes the answer; the default one goes twice (rendered, then cached). */
const QUERIES: { name: string; search: string; page: { offset: number; limit: number }; noArgs?: true }[] = [
  { name: 'default (rendered)', search: '', page: { offset: 0, limit: EVENT_LIMIT_DEFAULT } },
  { name: 'default (cached rendering)', search: '', page: { offset: 0, limit: EVENT_LIMIT_DEFAULT } },
  { name: 'event_limit=1', search: '&event_limit=1', page: { offset: 0, limit: 1 } },
  { name: 'event_offset=1', search: '&event_offset=1', page: { offset: 1, limit: EVENT_LIMIT_DEFAULT } },
  {
    name: 'event_limit=2&event_offset=3',
    search: '&event_limit=2&event_offset=3',
    page: { offset: 3, limit: 2 },
  },
  {
    name: 'exclude_function_args',
    search: '&exclude_function_args=true',
    page: { offset: 0, limit: EVENT_LIMIT_DEFAULT },
    noArgs: true,
  },
];

/**
 * The route's answer built from the store and the render layer (not from the route's bytes): mined txs, then
 * mempool txs, then ids not found, each in request order.
 */
async function expectedAnswer(
  store: Store,
  ids: string[],
  query: (typeof QUERIES)[number],
  unanchored: boolean,
): Promise<Record<string, { found: boolean; result: object }>> {
  const options = { excludeFunctionArgs: query.noArgs === true };
  const mined = new Map(
    (await findMinedTxs(store.sql, ids, { unanchored }, query.page)).map((t) => [t.tx_id, t]),
  );
  const pending = new Map(
    (
      await findMempoolTxs(
        store.sql,
        ids.filter((id) => !mined.has(id)),
        { unanchored },
      )
    ).map((t) => [t.tx_id, t]),
  );
  const answer: Record<string, { found: boolean; result: object }> = {};
  for (const id of ids) {
    const tx = mined.get(id);
    if (tx) answer[id] = { found: true, result: minedTransaction(tx, options) };
  }
  for (const id of ids) {
    const tx = pending.get(id);
    if (tx) answer[id] = { found: true, result: mempoolTransaction(tx, options) };
  }
  for (const id of ids) if (!(id in answer)) answer[id] = { found: false, result: { tx_id: id } };
  return answer;
}

/** Every key of a JSON document in document order, by path: equal lists mean equal key order. */
function keyOrder(value: unknown, path = '$', out: string[] = []): string[] {
  if (Array.isArray(value)) value.forEach((v, i) => keyOrder(v, `${path}[${i}]`, out));
  else if (value !== null && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) {
      out.push(`${path}.${k}`);
      keyOrder(v, `${path}.${k}`, out);
    }
  }
  return out;
}

async function assertSerializedAnswer(
  app: FastifyInstance,
  store: Store,
  serialize: () => Serialize,
  ids: string[],
  query: (typeof QUERIES)[number],
  unanchored: boolean,
) {
  const url = `${ROUTE}?tx_id=${ids.join(',')}${query.search}${unanchored ? '&unanchored=true' : ''}`;
  const expected = await expectedAnswer(store, ids, query, unanchored);
  const res = await get(app, url);
  const found = Object.values(expected).filter((e) => e.found).length;
  if (found === 0) {
    assert.equal(res.statusCode, 404, url);
    return 0;
  }
  assert.equal(res.statusCode, 200, url);
  const bytes = serialize()(expected);
  const [got, want] = [JSON.parse(res.body) as unknown, JSON.parse(bytes) as unknown];
  assert.deepEqual(got, want, url);
  assert.deepEqual(keyOrder(got), keyOrder(want), url);
  assert.equal(res.body, bytes, url);
  return found;
}

function count(compared: { requests: number; found: number }, found: number) {
  compared.requests += 1;
  compared.found += found;
}

for (const engine of testEngines(import.meta.url)) {
  for (const { name, start } of CHAINS) {
    describe(`${ROUTE} answers are its response schema's serialization (${name}, ${engine})`, () => {
      test('every tx alone and all together, with each query', async () => {
        const api = await start(engine);
        try {
          const { app, store } = api;
          let serializer: Serialize | undefined;
          app.addHook('onSend', async (request, reply, payload) => {
            if (request.routeOptions.url === ROUTE && reply.statusCode === 200) {
              serializer ??= reply.getSerializationFunction('200') as Serialize;
            }
            return payload;
          });
          const serialize = () => {
            assert.ok(serializer, `the 200 serializer of ${ROUTE}`);
            return serializer;
          };

          const mined = (
            await store.sql<{ tx_id: string }[]>`SELECT DISTINCT tx_id FROM txs ORDER BY tx_id`
          ).map((r) => r.tx_id);
          const mempool = (
            await store.sql<{ tx_id: string }[]>`
              SELECT tx_id FROM mempool_txs WHERE tx_id NOT IN (SELECT tx_id FROM txs) ORDER BY tx_id`
          ).map((r) => r.tx_id);
          const unknown = ['0x' + 'ab'.repeat(32), '0x' + '00'.repeat(32)];
          // what the fixture gives the comparison (the figures the report quotes)
          const compared = { requests: 0, found: 0 };

          for (const query of QUERIES) {
            if (query.name === 'default (cached rendering)') {
              // the cached renderings are what the route splices in unread: make sure this round uses them
              assert.ok(txByIdRenderings(store).size > 0, 'renderings cached by the first round');
            }
            for (const unanchored of [false, true]) {
              for (const id of [...mined, ...mempool, ...unknown]) {
                count(compared, await assertSerializedAnswer(app, store, serialize, [id], query, unanchored));
              }
              // all together, interleaved with unknown ids and in an order that is neither mined-first nor sorted
              const all = [...mempool, unknown[0]!, ...mined.toReversed(), unknown[1]!];
              for (let at = 0; at < all.length; at += MAX_MULTIPLE_TX_IDS) {
                const found = await assertSerializedAnswer(
                  app,
                  store,
                  serialize,
                  all.slice(at, at + MAX_MULTIPLE_TX_IDS),
                  query,
                  unanchored,
                );
                count(compared, found);
              }
            }
          }
          // what was compared (the figures the report quotes)
          console.log(
            `${name}: ${mined.length} mined, ${mempool.length} mempool-only tx ids; ${compared.requests} answers compared, ${compared.found} found txs in them`,
          );
          assert.ok(compared.found > 0);
        } finally {
          await api.close();
        }
      });
    });
  }
}
