import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { getJson, withApi, type TestApi } from '../support/api.js';
import {
  addressOf,
  transferWithEvent,
  type BuiltTx,
  type ChainBlock,
  type ChainMicroblock,
  type MinedTx,
} from '../support/chain.js';
import { stopOwnCluster } from '../support/database.js';
import { testEngines } from '../support/engines.js';

// The tx_index a confirmed microblock tx answers, in each sequence of messages (the original API's rule,
// see placeConfirmedMicroblockTxs): streamed first and confirmed by the block canonical as it arrives, it
// keeps the index it was streamed with; seen first in a block, or kept in a sibling that becomes canonical
// later, it has the block message's index. Messages are numbered as a node numbers them: from 0 in each
// microblock, and in a block its own txs first, then the confirmed stream's.

after(stopOwnCluster);

const BOB = addressOf('bob');
const send = (nonce: number, from: 'alice' | 'carol' = 'alice') =>
  transferWithEvent({ from, to: BOB, amount: 1000 + nonce, fee: 200, nonce });

/** The block message `confirms` the stream with `own` txs first, numbered as a node numbers them. */
async function nodeBlock(
  api: TestApi,
  opts: { own: MinedTx[]; confirms: ChainMicroblock[]; parent?: ChainBlock },
): Promise<ChainBlock> {
  const { block, message } = api.chain.buildBlock({
    txs: opts.own,
    confirms: opts.confirms,
    parent: opts.parent,
  });
  const payload = message.payload as { transactions: { txid: string; tx_index: number }[] };
  const ownIds = opts.own.map((m) => m.tx.txid);
  const streamedIds = opts.confirms.flatMap((mb) => mb.txs.map((m) => m.tx.txid));
  const order = [...ownIds, ...streamedIds];
  for (const tx of payload.transactions) tx.tx_index = order.indexOf(tx.txid);
  await api.chain.send({ ...message, body: JSON.stringify(payload) });
  return block;
}

const txIndex = async (api: TestApi, tx: BuiltTx) => {
  const { status, body } = await getJson(api.app, `/extended/v1/tx/${tx.txid}`);
  assert.equal(status, 200, tx.txid);
  return { tx_index: body.tx_index as number, block_height: body.block_height as number };
};

for (const engine of testEngines(import.meta.url)) {
  describe(`confirmed microblock txs: tx_index (${engine})`, () => {
    test('streamed, then confirmed by the next block: the index within its microblock', async () => {
      await withApi(engine, async (api) => {
        const [a, b, c, own] = await Promise.all([send(0), send(1), send(2), send(0, 'carol')]);
        await api.chain.block();
        const mb0 = await api.chain.microblock({ txs: [a, b] });
        const mb1 = await api.chain.microblock({ txs: [c], previous: mb0 });
        // block message: own 0, a 1, b 2, c 3
        await nodeBlock(api, { own: [own], confirms: [mb0, mb1] });
        assert.deepEqual(await txIndex(api, a.tx), { tx_index: 0, block_height: 2 });
        assert.deepEqual(await txIndex(api, b.tx), { tx_index: 1, block_height: 2 });
        assert.deepEqual(await txIndex(api, c.tx), { tx_index: 0, block_height: 2 });
        assert.deepEqual(await txIndex(api, own.tx), { tx_index: 0, block_height: 2 });
        // lists follow that index: the original orders by (height, microblock sequence, index), then sorts
        // the page again by (height, index) keeping ties in place: b (1) first, then own, c, a (all 0)
        const { body } = await getJson(api.app, `/extended/v1/address/${BOB}/transactions_with_transfers`);
        assert.deepEqual(
          body.results.map((r: { tx: { tx_id: string; tx_index: number } }) => [r.tx.tx_id, r.tx.tx_index]),
          [
            [b.tx.txid, 1],
            [own.tx.txid, 0],
            [c.tx.txid, 0],
            [a.tx.txid, 0],
          ],
        );
      });
    });

    test('microblocks first seen in the block: the block message index', async () => {
      await withApi(engine, async (api) => {
        const [a, b, own] = await Promise.all([send(0), send(1), send(0, 'carol')]);
        await api.chain.block();
        const mb0 = api.chain.buildMicroblock({ txs: [a, b] }).microblock; // never streamed
        await nodeBlock(api, { own: [own], confirms: [mb0] });
        assert.deepEqual(await txIndex(api, a.tx), { tx_index: 1, block_height: 2 });
        assert.deepEqual(await txIndex(api, b.tx), { tx_index: 2, block_height: 2 });
      });
    });

    test('a sibling that becomes canonical later: its own index (as mainnet-reorg-scenario1 block 30)', async () => {
      await withApi(engine, async (api) => {
        const [a, ownA, ownB] = await Promise.all([send(0), send(0, 'carol'), send(1, 'carol')]);
        const parent = await api.chain.block();
        const mb0 = await api.chain.microblock({ txs: [a] });
        // the first block 2 adopts the streamed row (index 0); its sibling, not canonical on arrival, has
        // a at index 1 (after its own tx)
        const first = await nodeBlock(api, { own: [ownA], confirms: [mb0], parent });
        assert.deepEqual(await txIndex(api, a.tx), { tx_index: 0, block_height: 2 });
        const sibling = await nodeBlock(api, { own: [ownB], confirms: [mb0], parent });
        assert.deepEqual(await txIndex(api, a.tx), { tx_index: 0, block_height: 2 }, 'first still canonical');
        await api.chain.block({ parent: sibling });
        assert.deepEqual(await txIndex(api, a.tx), { tx_index: 1, block_height: 2 }, 'the sibling’s row');
        // and back: the first block's row kept the streamed index
        const child = await api.chain.block({ parent: first });
        await api.chain.block({ parent: child });
        assert.deepEqual(await txIndex(api, a.tx), { tx_index: 0, block_height: 2 }, 'the first block’s row');
      });
    });
  });
}
