import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { Ingestor } from '../../src/ingest/ingestor.js';
import { MempoolStatus } from '../../src/store/schema/codes.js';
import { getJson, withApi, type TestApi } from '../support/api.js';
import { addressOf, TestChain, transferTx, transferWithEvent, type BuiltTx } from '../support/chain.js';
import { migrate } from '../../src/store/migrate.js';
import { Store } from '../../src/store/store.js';
import {
  connectTestDatabase,
  createTestDatabaseUrl,
  silentLogger,
  stopOwnCluster,
} from '../support/database.js';
import { testEngines } from '../support/engines.js';

// Txs that spend the same nonce, in each order of messages, and what the API answers for each: the
// original API's rules (store/write/mempool.ts, "Same-nonce txs"). A tx claims the (payer, nonce) pair of
// its payer (the sponsor if sponsored) and origin nonce; resolving a pair looks at its txs pending and
// dropped; the tx mined on the canonical chain wins over any fee; node drops change pending txs only.

after(stopOwnCluster);

const BOB = addressOf('bob');
const transfer = (fee: number, nonce = 0, from: 'alice' | 'sponsor' = 'alice') =>
  transferTx({ from, to: BOB, amount: 1000 + fee, fee, nonce });

async function status(api: TestApi, tx: BuiltTx) {
  const { status: code, body } = await getJson(api.app, `/extended/v1/tx/${tx.txid}`);
  assert.equal(code, 200, tx.txid);
  return {
    tx_status: body.tx_status as string,
    ...(body.replaced_by_tx_id ? { replaced_by_tx_id: body.replaced_by_tx_id as string } : {}),
  };
}

/** How many token transfers the mempool stats count as pending. */
async function pendingTransfers(api: TestApi): Promise<number> {
  const { body } = await getJson(api.app, '/extended/v1/tx/mempool/stats');
  return body.tx_type_counts.token_transfer as number;
}

for (const engine of testEngines(import.meta.url)) {
  describe(`same-nonce mempool txs (${engine})`, () => {
    test('replaced by fee, then dropped by the node as stale: it stays replaced', async () => {
      await withApi(engine, async (api) => {
        await api.chain.block();
        const [low, high] = await Promise.all([transfer(200), transfer(300)]);
        await api.chain.mempool([low]);
        assert.equal(await pendingTransfers(api), 1);
        await api.chain.mempool([high]);
        assert.deepEqual(await status(api, low), {
          tx_status: 'dropped_replace_by_fee',
          replaced_by_tx_id: high.txid,
        });
        assert.deepEqual(await status(api, high), { tx_status: 'pending' });
        assert.equal(await pendingTransfers(api), 1);
        await api.chain.drop([low.txid, high.txid], 'StaleGarbageCollect');
        assert.deepEqual(await status(api, low), {
          tx_status: 'dropped_replace_by_fee',
          replaced_by_tx_id: high.txid,
        });
        assert.deepEqual(await status(api, high), { tx_status: 'dropped_stale_garbage_collect' });
        assert.equal(await pendingTransfers(api), 0);
      });
    });

    test('dropped as stale, then outbid: replaced by fee; outbidding nothing: the newcomer is replaced', async () => {
      await withApi(engine, async (api) => {
        await api.chain.block();
        const [first, higher, lower] = await Promise.all([transfer(300), transfer(400), transfer(100)]);
        await api.chain.mempool([first]);
        await api.chain.drop([first.txid], 'StaleGarbageCollect');
        assert.deepEqual(await status(api, first), { tx_status: 'dropped_stale_garbage_collect' });
        // a lower fee than the dropped tx: the pair's best fee is still the dropped one
        await api.chain.mempool([lower]);
        assert.deepEqual(await status(api, lower), {
          tx_status: 'dropped_replace_by_fee',
          replaced_by_tx_id: first.txid,
        });
        assert.deepEqual(await status(api, first), { tx_status: 'dropped_stale_garbage_collect' });
        assert.equal(await pendingTransfers(api), 0);
        // a higher fee: it wins, and the dropped ones show it replaced them
        await api.chain.mempool([higher]);
        assert.deepEqual(await status(api, higher), { tx_status: 'pending' });
        for (const tx of [first, lower]) {
          assert.deepEqual(await status(api, tx), {
            tx_status: 'dropped_replace_by_fee',
            replaced_by_tx_id: higher.txid,
          });
        }
        assert.equal(await pendingTransfers(api), 1);
      });
    });

    test('a sponsored tx claims its sponsor’s nonce: the sponsor’s own tx outbids it', async () => {
      await withApi(engine, async (api) => {
        await api.chain.block();
        // alice's tx sponsored by `sponsor`; alice's nonce 0 and the sponsor's nonce 0
        const sponsored = await transferTx({
          from: 'alice',
          to: BOB,
          amount: 5,
          fee: 300,
          nonce: 0,
          sponsor: { key: 'sponsor', nonce: 7 },
        });
        await api.chain.mempool([sponsored]);
        // another tx of alice with nonce 0 but a different payer: its own pair (alice, 0), where the
        // sponsored tx (sender alice, nonce 0) counts too, with a lower fee
        const alices = await transfer(200, 0, 'alice');
        await api.chain.mempool([alices]);
        assert.deepEqual(await status(api, alices), {
          tx_status: 'dropped_replace_by_fee',
          replaced_by_tx_id: sponsored.txid,
        });
        assert.deepEqual(await status(api, sponsored), { tx_status: 'pending' });
        // the sponsor's own tx with nonce 0 and a higher fee: same pair (sponsor, 0)
        const sponsors = await transfer(500, 0, 'sponsor');
        await api.chain.mempool([sponsors]);
        assert.deepEqual(await status(api, sponsored), {
          tx_status: 'dropped_replace_by_fee',
          replaced_by_tx_id: sponsors.txid,
        });
        assert.deepEqual(await status(api, sponsors), { tx_status: 'pending' });
        assert.equal(await pendingTransfers(api), 1);
      });
    });

    test('mined after a drop: shown mined; the higher-fee rival is replaced by the mined tx', async () => {
      await withApi(engine, async (api) => {
        await api.chain.block();
        const mined = await transferWithEvent({ from: 'alice', to: BOB, amount: 1200, fee: 200, nonce: 0 });
        const rival = await transfer(900);
        await api.chain.mempool([mined.tx]);
        await api.chain.mempool([rival]);
        assert.deepEqual(await status(api, mined.tx), {
          tx_status: 'dropped_replace_by_fee',
          replaced_by_tx_id: rival.txid,
        });
        await api.chain.drop([mined.tx.txid], 'TooExpensive');
        assert.deepEqual(await status(api, mined.tx), {
          tx_status: 'dropped_replace_by_fee',
          replaced_by_tx_id: rival.txid,
        });
        assert.equal(await pendingTransfers(api), 1);
        await api.chain.block({ txs: [mined] });
        assert.deepEqual(await status(api, mined.tx), { tx_status: 'success' });
        assert.deepEqual(await status(api, rival), {
          tx_status: 'dropped_replace_by_fee',
          replaced_by_tx_id: mined.tx.txid,
        });
        assert.equal(await pendingTransfers(api), 0);
        // the node re-announcing the mined tx changes nothing
        await api.chain.mempool([mined.tx]);
        assert.deepEqual(await status(api, mined.tx), { tx_status: 'success' });
        assert.equal(await pendingTransfers(api), 0);
      });
    });

    test('streamed in an unconfirmed microblock: pruned, and its higher-fee rival replaced by it', async () => {
      await withApi(engine, async (api) => {
        await api.chain.block();
        const streamed = await transferWithEvent({
          from: 'alice',
          to: BOB,
          amount: 1200,
          fee: 200,
          nonce: 0,
        });
        const rival = await transfer(900);
        await api.chain.mempool([streamed.tx, rival]);
        assert.deepEqual(await status(api, streamed.tx), {
          tx_status: 'dropped_replace_by_fee',
          replaced_by_tx_id: rival.txid,
        });
        assert.equal(await pendingTransfers(api), 1);
        // the original prunes a microblock's txs as it prunes a block's: the same rule
        await api.chain.microblock({ txs: [streamed] });
        assert.deepEqual(await status(api, rival), {
          tx_status: 'dropped_replace_by_fee',
          replaced_by_tx_id: streamed.tx.txid,
        });
        assert.equal(await pendingTransfers(api), 0);
        const { body } = await getJson(api.app, `/extended/v1/tx/${streamed.tx.txid}?unanchored=true`);
        assert.equal(body.tx_status, 'success');
      });
    });

    test('a block mining two txs of one pair writes the earlier, pending one once', async () => {
      // The pair (sponsor, 0): alice's and carol's txs of origin nonce 0, both sponsored by `sponsor`. In the
      // mempool alice's outbids carol's; the block mines alice's, then carol's, which wins the pair as the
      // one mined last. Alice's row ends pruned and replaced by carol's: written by the resolution alone (the
      // prune, run after it, finds it pruned), not pruned first and then rewritten.
      // one connection: its counts of rows updated (pg_stat_xact_user_tables) are read inside the block's
      // transaction, and include those of its earlier transactions not yet flushed to the cumulative
      // statistics (PostgreSQL 15 flushes at most once a second): flushed before the block
      const db = await connectTestDatabase(await createTestDatabaseUrl(), { poolMax: 1 });
      await migrate(db.sql);
      const store = new Store(db);
      const flushStatistics = () => store.sql`SELECT pg_stat_force_next_flush()`;
      try {
        const updates: number[] = [];
        const chain = new TestChain(
          new Ingestor(store, {
            isMainnet: false,
            logger: silentLogger,
            beforeCommit: async (path) => {
              if (path !== '/new_block') return;
              const [row] = await store.sql<{ n: number }[]>`
                SELECT n_tup_upd::int AS n FROM pg_stat_xact_user_tables WHERE relname = 'mempool_txs'`;
              updates.push(row.n);
            },
          }),
        );
        await flushStatistics();
        await chain.block();
        const sponsoredBy = (from: 'alice' | 'carol', fee: number, sponsorNonce: number) =>
          transferTx({
            from,
            to: BOB,
            amount: 5,
            fee,
            nonce: 0,
            sponsor: { key: 'sponsor', nonce: sponsorNonce },
          });
        const alices = await sponsoredBy('alice', 300, 0);
        const carols = await sponsoredBy('carol', 200, 1);
        await chain.mempool([carols]);
        await chain.mempool([alices]);
        const rows = async () => [
          ...(await store.sql<
            { tx_id: string; pruned: boolean; status: number; replaced_by_tx_id: string | null }[]
          >`SELECT tx_id, pruned, status, replaced_by_tx_id FROM mempool_txs ORDER BY tx_id = ${carols.txid}`),
        ];
        assert.deepEqual(await rows(), [
          { tx_id: alices.txid, pruned: false, status: MempoolStatus.pending, replaced_by_tx_id: null },
          {
            tx_id: carols.txid,
            pruned: true,
            status: MempoolStatus.dropped_replace_by_fee,
            replaced_by_tx_id: alices.txid,
          },
        ]);
        await flushStatistics();
        await chain.block({ txs: [{ tx: alices }, { tx: carols }] });
        assert.deepEqual(await rows(), [
          {
            tx_id: alices.txid,
            pruned: true,
            status: MempoolStatus.dropped_replace_by_fee,
            replaced_by_tx_id: carols.txid,
          },
          // the winner keeps its status (store/write/mempool.ts, "Same-nonce txs")
          {
            tx_id: carols.txid,
            pruned: true,
            status: MempoolStatus.dropped_replace_by_fee,
            replaced_by_tx_id: alices.txid,
          },
        ]);
        // the first block changed no mempool row; the second one row, once
        assert.deepEqual(updates, [0, 1]);
      } finally {
        await store.close();
      }
    });

    test('a drop reaches pending txs only', async () => {
      await withApi(engine, async (api) => {
        await api.chain.block();
        const tx = await transfer(200);
        await api.chain.mempool([tx]);
        await api.chain.drop([tx.txid], 'TooExpensive');
        await api.chain.drop([tx.txid], 'Problematic');
        assert.deepEqual(await status(api, tx), { tx_status: 'dropped_too_expensive' });
        assert.equal(await pendingTransfers(api), 0);
      });
    });
  });
}
