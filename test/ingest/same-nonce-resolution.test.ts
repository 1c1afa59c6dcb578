import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { MempoolStatus } from '../../src/store/schema/codes.js';
import { getJson, startTestApi, type TestApi } from '../support/api.js';
import { addressOf, transferTx, transferWithEvent, type BuiltTx } from '../support/chain.js';
import { stopOwnCluster } from '../support/database.js';
import { testEngines } from '../support/engines.js';

// Same-nonce resolution after a block, a microblock and a reorg, on both of ingest's paths: a new tip block
// resolves its pairs from its own txs (store/write/mempool.ts `RESOLVE_AT_TIP`, without reading the stored
// mined txs), the read-back path (`readBackRows`, as a reorg's restored blocks) from the txs stored. Each
// sequence's mempool rows are given as the rule (store/write/mempool.ts, "Same-nonce txs") decides them, so
// a narrowed resolution that misses a loser, or ranks a block's txs in another order, fails on either path.
// (Checked to fail on the in-hand path: leaving out a block's sponsored txs fails the block of two txs of
// one pair; not resolving at the tip at all fails it and the reorg.)

after(stopOwnCluster);

const BOB = addressOf('bob');
const RBF = MempoolStatus.dropped_replace_by_fee;
const PENDING = MempoolStatus.pending;

/** Every mempool row of these txs: [pruned, status, replaced by] */
async function mempoolRows(api: TestApi, txs: Record<string, BuiltTx>) {
  const names = new Map(Object.entries(txs).map(([name, tx]) => [tx.txid, name]));
  const rows = await api.store.sql<
    { tx_id: string; pruned: boolean; status: number; replaced_by_tx_id: string | null }[]
  >`
    SELECT tx_id, pruned, status, replaced_by_tx_id FROM mempool_txs WHERE tx_id = ANY(${[...names.keys()]})`;
  return Object.fromEntries(
    rows
      .map((r) => [
        names.get(r.tx_id)!,
        [r.pruned, r.status, r.replaced_by_tx_id === null ? null : names.get(r.replaced_by_tx_id)!],
      ])
      .sort(([a], [b]) => String(a).localeCompare(String(b))),
  );
}

async function txStatus(api: TestApi, tx: BuiltTx): Promise<string> {
  const { status, body } = await getJson(api.app, `/extended/v1/tx/${tx.txid}?unanchored=true`);
  assert.equal(status, 200, tx.txid);
  return body.tx_status as string;
}

for (const engine of testEngines(import.meta.url)) {
  for (const readBackRows of [false, true]) {
    const path = readBackRows ? 'read back' : 'in hand';
    describe(`same-nonce resolution, rows ${path} (${engine})`, () => {
      async function withPath(fn: (api: TestApi) => Promise<void>) {
        const api = await startTestApi({ engine, ingest: { readBackRows } });
        try {
          await fn(api);
        } finally {
          await api.close();
        }
      }

      test('a block mining two txs of one pair: the later one wins over the other and the pending rival', async () => {
        await withPath(async (api) => {
          await api.chain.block();
          // the sponsor's own tx and alice's tx it sponsors, both with nonce 0: pair (sponsor, 0)
          const own = await transferWithEvent({ from: 'sponsor', to: BOB, amount: 10, fee: 500, nonce: 0 });
          const sponsored = await transferWithEvent({
            from: 'alice',
            to: BOB,
            amount: 20,
            fee: 300,
            nonce: 0,
            sponsor: { key: 'sponsor', nonce: 7 },
          });
          const rival = await transferTx({ from: 'sponsor', to: BOB, amount: 30, fee: 100, nonce: 0 });
          const txs = { own: own.tx, sponsored: sponsored.tx, rival };
          await api.chain.mempool([own.tx, sponsored.tx, rival]);
          assert.deepEqual(await mempoolRows(api, txs), {
            own: [false, PENDING, null],
            rival: [true, RBF, 'own'],
            sponsored: [true, RBF, 'own'],
          });
          // mined in this order: the sponsored tx is the pair's last mined tx, the winner
          await api.chain.block({ txs: [own, sponsored] });
          assert.deepEqual(await mempoolRows(api, txs), {
            own: [true, RBF, 'sponsored'],
            rival: [true, RBF, 'sponsored'],
            // the winner keeps what it showed (it shows as mined)
            sponsored: [true, RBF, 'own'],
          });
          assert.equal(await txStatus(api, own.tx), 'success');
          assert.equal(await txStatus(api, sponsored.tx), 'success');
          assert.equal(await txStatus(api, rival), 'dropped_replace_by_fee');
        });
      });

      test('a microblock, then the block confirming it: the rival stays replaced by the streamed tx', async () => {
        await withPath(async (api) => {
          const parent = await api.chain.block();
          const streamed = await transferWithEvent({
            from: 'alice',
            to: BOB,
            amount: 10,
            fee: 200,
            nonce: 0,
          });
          const rival = await transferTx({ from: 'alice', to: BOB, amount: 20, fee: 900, nonce: 0 });
          const txs = { streamed: streamed.tx, rival };
          await api.chain.mempool([streamed.tx, rival]);
          assert.deepEqual(await mempoolRows(api, txs), {
            rival: [false, PENDING, null],
            streamed: [true, RBF, 'rival'],
          });
          const micro = await api.chain.microblock({ txs: [streamed], parent });
          assert.deepEqual(await mempoolRows(api, txs), {
            rival: [true, RBF, 'streamed'],
            streamed: [true, RBF, 'rival'],
          });
          await api.chain.block({ parent, confirms: [micro] });
          assert.deepEqual(await mempoolRows(api, txs), {
            rival: [true, RBF, 'streamed'],
            streamed: [true, RBF, 'rival'],
          });
          assert.equal(await txStatus(api, streamed.tx), 'success');
        });
      });

      test('a reorg brings the mined tx back to the mempool, and the new tip mines its rival', async () => {
        await withPath(async (api) => {
          const base = await api.chain.block();
          const mined = await transferWithEvent({ from: 'alice', to: BOB, amount: 10, fee: 200, nonce: 0 });
          const rival = await transferWithEvent({ from: 'alice', to: BOB, amount: 20, fee: 900, nonce: 0 });
          const txs = { mined: mined.tx, rival: rival.tx };
          await api.chain.mempool([mined.tx, rival.tx]);
          await api.chain.block({ parent: base, txs: [mined] });
          assert.deepEqual(await mempoolRows(api, txs), {
            mined: [true, RBF, 'rival'],
            rival: [true, RBF, 'mined'],
          });
          // a sibling (not canonical on arrival), then a block on it: the reorg orphans `mined`, which goes
          // back to the mempool as pending, and the new tip mines the rival, which replaces it
          const sibling = await api.chain.block({ parent: base });
          await api.chain.block({ parent: sibling, txs: [rival] });
          assert.deepEqual(await mempoolRows(api, txs), {
            mined: [true, RBF, 'rival'],
            rival: [true, RBF, 'mined'],
          });
          assert.equal(await txStatus(api, mined.tx), 'dropped_replace_by_fee');
          assert.equal(await txStatus(api, rival.tx), 'success');
        });
      });
    });
  }
}
