import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { Ingestor } from '../../src/ingest/ingestor.js';
import type { Store } from '../../src/store/store.js';
import { ChainBuilder, microblockHash, signedTransfer, testAddress } from '../support/chain-builder.js';
import { engines, openTestStore, silentLogger, stopOwnCluster } from '../support/database.js';

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

const alice = () => testAddress(1);
const bob = () => testAddress(2);

for (const engine of engines) {
  describe(`chain semantics (${engine})`, () => {
    test('mempool: receive, mine, replace by fee, drop, revive, garbage collect', async () => {
      const store = await openTestStore(engine);
      try {
        const ingest = new Ingestor(store, { isMainnet: false, logger: silentLogger });
        const chain = new ChainBuilder();
        await ingest.apply('/new_block', chain.block().body);

        const cheap = await signedTransfer({ from: 1, to: bob(), amount: 10, fee: 100, nonce: 0 });
        const dear = await signedTransfer({ from: 1, to: bob(), amount: 10, fee: 300, nonce: 0 });
        const other = await signedTransfer({ from: 1, to: bob(), amount: 5, fee: 100, nonce: 1 });
        const stale = await signedTransfer({ from: 3, to: bob(), amount: 5, fee: 100, nonce: 0 });
        await ingest.apply('/new_mempool_tx', JSON.stringify([cheap.raw, other.raw, stale.raw]));
        assert.deepEqual(await mempoolRow(store, cheap.txid), {
          pruned: false,
          status: 0,
          replaced_by_tx_id: null,
        });

        // Same payer and nonce, higher fee: the cheaper one is replaced.
        await ingest.apply('/new_mempool_tx', JSON.stringify([dear.raw]));
        assert.deepEqual(await mempoolRow(store, cheap.txid), {
          pruned: true,
          status: -10,
          replaced_by_tx_id: dear.txid,
        });
        assert.equal((await mempoolRow(store, dear.txid)).pruned, false);

        // Mined: pruned from the mempool; a mempool message for it later keeps it pruned.
        await ingest.apply(
          '/new_block',
          chain.block({ txs: [{ tx: dear, transfer: { recipient: bob(), amount: 10 } }] }).body,
        );
        assert.equal((await mempoolRow(store, dear.txid)).pruned, true);
        assert.ok(await minedCanonically(store, dear.txid));
        await ingest.apply('/new_mempool_tx', JSON.stringify([dear.raw, other.raw]));
        assert.equal((await mempoolRow(store, dear.txid)).pruned, true);
        assert.equal(await stxBalance(store, bob()), '10');

        // The node drops a tx; it is revived when the node accepts it again.
        await ingest.apply(
          '/drop_mempool_tx',
          JSON.stringify({ dropped_txids: [other.txid], reason: 'TooExpensive', new_txid: null }),
        );
        assert.deepEqual(await mempoolRow(store, other.txid), {
          pruned: true,
          status: -12,
          replaced_by_tx_id: null,
        });
        await ingest.apply('/new_mempool_tx', JSON.stringify([other.raw]));
        assert.deepEqual(await mempoolRow(store, other.txid), {
          pruned: false,
          status: 0,
          replaced_by_tx_id: null,
        });

        // Received at height 1: still pending at height 256, dropped by our garbage collection at 257.
        for (let height = 3; height <= 256; height++) await ingest.apply('/new_block', chain.block().body);
        assert.equal((await mempoolRow(store, stale.txid)).pruned, false);
        await ingest.apply('/new_block', chain.block().body);
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
        const ingest = new Ingestor(store, { isMainnet: false, logger: silentLogger });
        const chain = new ChainBuilder();
        const b1 = chain.block();
        await ingest.apply('/new_block', b1.body);
        const pay = await signedTransfer({ from: 1, to: bob(), amount: 700, fee: 50, nonce: 0 });
        await ingest.apply('/new_mempool_tx', JSON.stringify([pay.raw]));
        const a2 = chain.block({
          txs: [{ tx: pay, transfer: { recipient: bob(), amount: 700 } }],
          fork: 'a',
        });
        await ingest.apply('/new_block', a2.body);
        assert.equal(await minedCanonically(store, pay.txid), a2.index_block_hash);
        assert.equal(await stxBalance(store, bob()), '700');

        // A sibling at the same height stays non-canonical...
        const b2 = chain.block({ parent: b1, fork: 'b' });
        await ingest.apply('/new_block', b2.body);
        assert.equal(await minedCanonically(store, pay.txid), a2.index_block_hash);
        // ...until a child makes its fork the higher one.
        const b3 = chain.block({ parent: b2, fork: 'b' });
        await ingest.apply('/new_block', b3.body);
        const [tip] = await store.sql<{ index_block_hash: string; block_height: number }[]>`
          SELECT index_block_hash, block_height FROM chain_tip`;
        assert.deepEqual(tip, { index_block_hash: b3.index_block_hash, block_height: 3 });
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
        const a3 = chain.block({ parent: a2, fork: 'a' });
        const a4 = chain.block({ parent: a3, fork: 'a' });
        await ingest.apply('/new_block', a3.body);
        await ingest.apply('/new_block', a4.body);
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
        const ingest = new Ingestor(store, { isMainnet: false, logger: silentLogger });
        const chain = new ChainBuilder();
        const b1 = chain.block();
        await ingest.apply('/new_block', b1.body);
        const t1 = await signedTransfer({ from: 1, to: bob(), amount: 20, fee: 10, nonce: 0 });
        const t2 = await signedTransfer({ from: 1, to: bob(), amount: 30, fee: 10, nonce: 1 });
        await ingest.apply('/new_mempool_tx', JSON.stringify([t1.raw, t2.raw]));
        const m0 = { hash: microblockHash('m0'), sequence: 0, parent: b1.block_hash };
        const m1 = { hash: microblockHash('m1'), sequence: 1, parent: m0.hash };
        await ingest.apply(
          '/new_microblocks',
          chain.microblocks({
            txs: [
              { tx: t1, transfer: { recipient: bob(), amount: 20 }, microblock: m0 },
              { tx: t2, transfer: { recipient: bob(), amount: 30 }, microblock: m1 },
            ],
          }),
        );
        const unconfirmed = await store.sql<{ tx_id: string; block_height: number }[]>`
          SELECT tx_id, block_height FROM txs WHERE index_block_hash = '' AND canonical AND microblock_canonical
          ORDER BY tx_id`;
        assert.deepEqual(
          unconfirmed.map((r) => r.block_height),
          [2, 2],
        );
        assert.equal((await mempoolRow(store, t1.txid)).pruned, true);
        assert.equal(await stxBalance(store, bob()), null, 'unconfirmed txs are not in anchored balances');
        const [tip] = await store.sql<{ microblock_hash: string }[]>`SELECT microblock_hash FROM chain_tip`;
        assert.equal(tip.microblock_hash, m1.hash);

        // The next block confirms only m0: t1 is mined in it, t2 (in m1) goes back to the mempool.
        const b2 = chain.block({
          txs: [{ tx: t1, transfer: { recipient: bob(), amount: 20 }, microblock: m0 }],
          parentMicroblock: { hash: m0.hash, sequence: 0 },
        });
        await ingest.apply('/new_block', b2.body);
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
        >`
          SELECT microblock_hash, microblock_canonical, index_block_hash FROM microblocks ORDER BY microblock_sequence`;
        assert.deepEqual(
          [...micro],
          [
            { microblock_hash: m0.hash, microblock_canonical: true, index_block_hash: b2.index_block_hash },
            { microblock_hash: m1.hash, microblock_canonical: false, index_block_hash: '' },
          ],
        );

        // Microblocks built on a block that is not the tip are ignored.
        const late = await signedTransfer({ from: 4, to: bob(), amount: 1, fee: 1, nonce: 0 });
        await ingest.apply(
          '/new_microblocks',
          chain.microblocks({
            parent: b1,
            txs: [
              { tx: late, microblock: { hash: microblockHash('late'), sequence: 0, parent: b1.block_hash } },
            ],
          }),
        );
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
