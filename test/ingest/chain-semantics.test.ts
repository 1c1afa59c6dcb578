import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { Ingestor } from '../../src/ingest/ingestor.js';
import type { Store } from '../../src/store/store.js';
import { addressOf, ev, TestChain, transferTx, type BuiltTx } from '../support/chain.js';
import { openTestStore, silentLogger, stopOwnCluster } from '../support/database.js';
import { testEngines } from '../support/engines.js';

after(stopOwnCluster);

// Mempool lifecycle, reorgs and microblocks, driven through event-observer messages.

async function mempoolRow(store: Store, txId: string) {
  const [row] = await store.sql<{ pruned: boolean; status: number; replaced_by_tx_id: string | null }[]>`
    SELECT pruned, status, replaced_by_tx_id FROM mempool_txs WHERE tx_id = ${txId}`;
  return row;
}

async function minedCanonically(store: Store, txId: string): Promise<string | null> {
  const [row] = await store.sql<{ index_block_hash: string }[]>`
    SELECT index_block_hash FROM txs WHERE tx_id = ${txId} AND canonical AND microblock_canonical`;
  return row?.index_block_hash ?? null;
}

async function stxBalance(store: Store, principal: string) {
  const [row] = await store.sql<{ balance: string }[]>`
    SELECT (total_received - total_sent - total_fees_sent + total_miner_rewards_received)::text AS balance
    FROM stx_balances WHERE principal = ${principal}`;
  return row?.balance ?? null;
}

const alice = () => addressOf('alice');
const bob = () => addressOf('bob');

/** A successful transfer as mined, with the event the node reports for it. */
const paid = (tx: BuiltTx, recipient: string, amount: number) => ({
  tx,
  events: [ev.stxTransfer(tx.sender, recipient, amount)],
});

for (const engine of testEngines(import.meta.url)) {
  describe(`chain semantics (${engine})`, () => {
    test('mempool: receive, mine, replace by fee, drop, revive, garbage collect', async () => {
      const store = await openTestStore(engine);
      try {
        const ingest = new Ingestor(store, { isMainnet: false, logger: silentLogger });
        const chain = new TestChain(ingest);
        await chain.block();

        const cheap = await transferTx({ from: 'alice', to: bob(), amount: 10, fee: 100, nonce: 0 });
        const dear = await transferTx({ from: 'alice', to: bob(), amount: 10, fee: 300, nonce: 0 });
        const other = await transferTx({ from: 'alice', to: bob(), amount: 5, fee: 100, nonce: 1 });
        const stale = await transferTx({ from: 'carol', to: bob(), amount: 5, fee: 100, nonce: 0 });
        await chain.mempool([cheap, other, stale]);
        assert.deepEqual(await mempoolRow(store, cheap.txid), {
          pruned: false,
          status: 0,
          replaced_by_tx_id: null,
        });

        // Same payer and nonce, higher fee: the cheaper one is replaced.
        await chain.mempool([dear]);
        assert.deepEqual(await mempoolRow(store, cheap.txid), {
          pruned: true,
          status: -10,
          replaced_by_tx_id: dear.txid,
        });
        assert.equal((await mempoolRow(store, dear.txid)).pruned, false);

        // Mined: pruned from the mempool; a mempool message for it later keeps it pruned.
        await chain.block({ txs: [paid(dear, bob(), 10)] });
        assert.equal((await mempoolRow(store, dear.txid)).pruned, true);
        assert.ok(await minedCanonically(store, dear.txid));
        await chain.mempool([dear, other]);
        assert.equal((await mempoolRow(store, dear.txid)).pruned, true);
        assert.equal(await stxBalance(store, bob()), '10');

        // The node drops a tx; it is revived when the node accepts it again.
        await ingest.take(
          '/drop_mempool_tx',
          JSON.stringify({ dropped_txids: [other.txid], reason: 'TooExpensive', new_txid: null }),
        );
        assert.deepEqual(await mempoolRow(store, other.txid), {
          pruned: true,
          status: -12,
          replaced_by_tx_id: null,
        });
        await chain.mempool([other]);
        assert.deepEqual(await mempoolRow(store, other.txid), {
          pruned: false,
          status: 0,
          replaced_by_tx_id: null,
        });

        // Received at height 1: still pending at height 256, dropped by our garbage collection at 257.
        for (let height = 3; height <= 256; height++) await chain.block();
        assert.equal((await mempoolRow(store, stale.txid)).pruned, false);
        await chain.block();
        assert.deepEqual(await mempoolRow(store, stale.txid), {
          pruned: true,
          status: -14,
          replaced_by_tx_id: null,
        });
      } finally {
        await store.close();
      }
    });

    test('reorg: the higher fork wins, orphaned txs go back to the mempool, balances follow', async () => {
      const store = await openTestStore(engine);
      try {
        const chain = new TestChain(new Ingestor(store, { isMainnet: false, logger: silentLogger }));
        const b1 = await chain.block();
        const pay = await transferTx({ from: 'alice', to: bob(), amount: 700, fee: 50, nonce: 0 });
        await chain.mempool([pay]);
        const a2 = await chain.block({ txs: [paid(pay, bob(), 700)] });
        assert.equal(await minedCanonically(store, pay.txid), a2.index_block_hash);
        assert.equal(await stxBalance(store, bob()), '700');

        // A sibling at the same height stays non-canonical...
        const b2 = await chain.block({ parent: b1 });
        assert.equal(await minedCanonically(store, pay.txid), a2.index_block_hash);
        // ...until a child makes its fork the higher one.
        const b3 = await chain.block({ parent: b2 });
        const [tip] = await store.sql<{ index_block_hash: string; block_height: number }[]>`
          SELECT index_block_hash, block_height FROM chain_tip`;
        assert.deepEqual({ ...tip }, { index_block_hash: b3.index_block_hash, block_height: 3 });
        assert.equal(await minedCanonically(store, pay.txid), null);
        assert.deepEqual(await mempoolRow(store, pay.txid), {
          pruned: false,
          status: 0,
          replaced_by_tx_id: null,
        });
        assert.equal(await stxBalance(store, bob()), '0');
        assert.equal(await stxBalance(store, alice()), '0');
        const [blocks] = await store.sql<{ canonical: string }[]>`
          SELECT string_agg(block_height || ':' || canonical, ',' ORDER BY block_height, canonical) AS canonical
          FROM blocks`;
        assert.equal(blocks.canonical, '1:true,2:false,2:true,3:true');

        // The first fork comes back higher: the tx is mined again, the mempool row pruned.
        const a3 = await chain.block({ parent: a2 });
        await chain.block({ parent: a3 });
        assert.equal(await minedCanonically(store, pay.txid), a2.index_block_hash);
        assert.equal((await mempoolRow(store, pay.txid)).pruned, true);
        assert.equal(await stxBalance(store, bob()), '700');
        const [count] = await store.sql<{ tx_count: number }[]>`
          SELECT tx_count FROM principal_stats WHERE principal = ${bob()}`;
        assert.equal(count.tx_count, 1);
      } finally {
        await store.close();
      }
    });

    test('microblocks: unconfirmed txs, confirmation by the next block, orphaning', async () => {
      const store = await openTestStore(engine);
      try {
        const chain = new TestChain(new Ingestor(store, { isMainnet: false, logger: silentLogger }));
        const b1 = await chain.block();
        const t1 = await transferTx({ from: 'alice', to: bob(), amount: 20, fee: 10, nonce: 0 });
        const t2 = await transferTx({ from: 'alice', to: bob(), amount: 30, fee: 10, nonce: 1 });
        await chain.mempool([t1, t2]);
        const m0 = await chain.microblock({ txs: [paid(t1, bob(), 20)] });
        const m1 = await chain.microblock({ txs: [paid(t2, bob(), 30)], previous: m0 });
        const unconfirmed = await store.sql<{ block_height: number }[]>`
          SELECT block_height FROM txs WHERE index_block_hash = '' AND canonical AND microblock_canonical`;
        assert.deepEqual(
          unconfirmed.map((r) => r.block_height),
          [2, 2],
        );
        assert.equal((await mempoolRow(store, t1.txid)).pruned, true);
        assert.equal(await stxBalance(store, bob()), null, 'unconfirmed txs are not in anchored balances');
        const [tip] = await store.sql<{ microblock_hash: string }[]>`SELECT microblock_hash FROM chain_tip`;
        assert.equal(tip.microblock_hash, m1.hash);

        // The next block confirms only m0: t1 is mined in it, t2 (in m1) goes back to the mempool.
        const b2 = await chain.block({ confirms: [m0] });
        assert.equal(await minedCanonically(store, t1.txid), b2.index_block_hash);
        assert.equal(await minedCanonically(store, t2.txid), null);
        assert.deepEqual(await mempoolRow(store, t2.txid), {
          pruned: false,
          status: 0,
          replaced_by_tx_id: null,
        });
        assert.equal(await stxBalance(store, bob()), '20');
        const micro = await store.sql<
          { microblock_hash: string; microblock_canonical: boolean; index_block_hash: string }[]
        >`SELECT microblock_hash, microblock_canonical, index_block_hash FROM microblocks ORDER BY microblock_sequence`;
        assert.deepEqual(
          [...micro],
          [
            { microblock_hash: m0.hash, microblock_canonical: true, index_block_hash: b2.index_block_hash },
            { microblock_hash: m1.hash, microblock_canonical: false, index_block_hash: b2.index_block_hash },
          ],
        );

        // Microblocks built on a block that is not the tip are ignored.
        const late = await transferTx({ from: 'dave', to: bob(), amount: 1, fee: 1, nonce: 0 });
        await chain.microblock({ txs: [paid(late, bob(), 1)], parent: b1 });
        const [lateRows] = await store.sql<
          { n: number }[]
        >`SELECT count(*)::int AS n FROM txs WHERE tx_id = ${late.txid}`;
        assert.equal(lateRows.n, 0);
      } finally {
        await store.close();
      }
    });
  });
}
