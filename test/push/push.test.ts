import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import {
  connectWebSocketClient,
  StacksApiSocketClient,
  type StacksApiWebSocketClient,
} from '@stacks/blockchain-api-client';
import { uintCV } from '@stacks/transactions';
import { startTestApi, type TestApi } from '../support/api.js';
import {
  addressOf,
  ev,
  transferTx,
  transferWithEvent,
  type BuiltTx,
  type ChainMicroblock,
} from '../support/chain.js';
import { stopOwnCluster } from '../support/database.js';
import { testEngines } from '../support/engines.js';
import { Received, TEST_PUSH_LIMITS } from './support.js';

// Live push with the official client (@stacks/blockchain-api-client, unmodified) over both channels: a chain
// with mempool churn, a block, a fork switch, a microblock and NFT events goes through the ingest path, and
// every event received must be, in order, what the matching read endpoint answers at that moment. The second
// test goes on with the same server and clients: block, microblock and STX balance events; the third, a
// micro-fork: the replacing microblock, and the updates of a tx it sent back to the mempool; the fourth, the
// address events of a tx streamed in a microblock, before the block that confirms it.

after(stopOwnCluster);

const NFT_CONTRACT = `${addressOf('alice')}.nft`;
const NFT_ASSET = `${NFT_CONTRACT}::token`;

for (const engine of testEngines(import.meta.url)) {
  describe(`live push (${engine})`, () => {
    let api: TestApi;
    let ws: StacksApiWebSocketClient;
    let io: StacksApiSocketClient;
    /** the last microblock streamed on the tip: the first test's for the second, the third's for the fourth */
    let stream: ChainMicroblock;
    // what the second test subscribes to, and the third goes on receiving
    const wsMicroblock = new Received<unknown>();
    const ioMicroblock = new Received<unknown>();
    const wsBalance = new Received<unknown>();
    const ioBalance = new Received<unknown[]>();

    after(async () => {
      io?.socket.disconnect();
      (ws?.webSocket as { close(): void } | undefined)?.close();
      await api?.close();
    });

    /** What the endpoint answers now, parsed. */
    const answer = async (url: string) => {
      const res = await api.app.inject({ method: 'GET', url });
      assert.equal(res.statusCode, 200, url);
      return res.json() as unknown;
    };
    const txNow = (tx: BuiltTx) => answer(`/extended/v1/tx/${tx.txid}?unanchored=true`);
    /** Subscribes on socket.io and waits for the server's acknowledgement. */
    const ioSubscribed = (topic: string) =>
      new Promise<void>((resolve, reject) =>
        io.socket.emit('subscribe', topic as never, (error: string | null) =>
          error ? reject(new Error(error)) : resolve(),
        ),
      );

    test('both channels push tx updates, mempool changes, address txs and NFT events, reorgs included', async () => {
      api = await startTestApi({ engine, listen: true, push: { limits: TEST_PUSH_LIMITS } });
      const { chain } = api;
      const alice = addressOf('alice');
      const bob = addressOf('bob');
      await chain.block({ txs: [] });
      const base = await chain.block({ txs: [] });

      ws = await connectWebSocketClient(api.baseUrl.replace('http', 'ws'));
      io = new StacksApiSocketClient({ url: api.baseUrl, subscriptions: ['mempool'] });

      const first = await transferTx({ from: 'alice', to: bob, amount: 100, fee: 300, nonce: 0 });
      const wsTx = new Received<unknown>();
      const wsMempool = new Received<unknown>();
      const wsAddress = new Received<unknown>();
      const wsNft = new Received<unknown>();
      const ioTx = new Received<unknown>();
      const ioMempool = new Received<unknown>();
      const ioAddress = new Received<unknown[]>();
      const ioNftAsset = new Received<unknown[]>();
      await ws.subscribeTxUpdates(first.txid, wsTx.push);
      await ws.subscribeMempool(wsMempool.push);
      await ws.subscribeAddressTransactions(alice, wsAddress.push);
      await ws.subscribeNftEventUpdates(wsNft.push);
      io.socket.on('mempool', ioMempool.push);
      const acked = (topic: string, subscribe: () => void) =>
        new Promise<void>((resolve, reject) => {
          io.socket.once(topic as never, () => {});
          subscribe();
          // the client's own emit carries no way to wait: a subscribe with an ack of our own does
          io.socket.emit('subscribe', topic as never, (error: string | null) =>
            error ? reject(new Error(error)) : resolve(),
          );
        });
      await acked(`transaction:${first.txid}`, () => io.subscribeTransaction(first.txid, ioTx.push));
      await acked(`address-transaction:${alice}`, () =>
        io.subscribeAddressTransactions(alice, (address, tx) => ioAddress.push([address, tx])),
      );
      await acked(`nft-asset-event:${NFT_ASSET}+0x0100000000000000000000000000000001`, () =>
        io.subscribeNftAssetEvent(NFT_ASSET, '0x0100000000000000000000000000000001', (asset, value, event) =>
          ioNftAsset.push([asset, value, event]),
        ),
      );

      // 1. the tx enters the mempool
      await chain.mempool([first]);
      const [pending] = await wsTx.atLeast(1);
      assert.deepEqual(pending, await txNow(first));
      assert.equal((pending as { tx_status: string }).tx_status, 'pending');
      assert.deepEqual(await wsMempool.atLeast(1), [pending]);
      assert.deepEqual(await ioMempool.atLeast(1), [pending]);
      assert.deepEqual(await ioTx.atLeast(1), [pending]);

      // 2. mined in a block, with an NFT mint
      const mined = await chain.block({
        txs: [
          { tx: first, events: [ev.stxTransfer(alice, bob, 100), ev.nftMint(NFT_ASSET, bob, uintCV(1))] },
        ],
      });
      const [, success] = await wsTx.atLeast(2);
      assert.deepEqual(success, await txNow(first));
      assert.equal((success as { tx_status: string }).tx_status, 'success');
      assert.deepEqual((await ioTx.atLeast(2))[1], success);
      const withTransfers = await answer(`/extended/v1/address/${alice}/${first.txid}/with_transfers`);
      const [addressTx] = await wsAddress.atLeast(1);
      assert.deepEqual(addressTx, {
        address: alice,
        tx_id: first.txid,
        tx_status: 'success',
        tx_type: 'token_transfer',
        ...(withTransfers as object),
      });
      assert.deepEqual(await ioAddress.atLeast(1), [[alice, withTransfers]]);
      const [nft] = await wsNft.atLeast(1);
      assert.deepEqual(nft, {
        recipient: bob,
        asset_identifier: NFT_ASSET,
        asset_event_type: 'mint',
        value: { hex: '0x0100000000000000000000000000000001', repr: 'u1' },
        tx_id: first.txid,
        tx_index: 0,
        block_height: mined.height,
        event_index: 1,
      });
      assert.deepEqual(await ioNftAsset.atLeast(1), [
        [NFT_ASSET, '0x0100000000000000000000000000000001', nft],
      ]);

      // 3. a fork switch orphans the block: the tx shows from the mempool again
      const sibling = await chain.block({ parent: base, txs: [] });
      await chain.block({ parent: sibling, txs: [] });
      const [, , orphaned] = await wsTx.atLeast(3);
      assert.deepEqual(orphaned, await txNow(first));
      assert.equal((orphaned as { tx_status: string }).tx_status, 'pending');
      // back in the mempool: a mempool event too, the same answer
      assert.deepEqual((await wsMempool.atLeast(2))[1], orphaned);

      // 4. mined again in a microblock on the new tip (unanchored), then dropped replacement churn
      const second = await transferWithEvent({ from: 'bob', to: alice, amount: 5, fee: 300, nonce: 0 });
      stream = await chain.microblock({
        txs: [{ tx: first, events: [ev.stxTransfer(alice, bob, 100)] }, second],
      });
      const [, , , streamed] = await wsTx.atLeast(4);
      assert.deepEqual(streamed, await txNow(first));
      assert.equal((streamed as { is_unanchored: boolean }).is_unanchored, true);

      const stale = await transferTx({ from: 'carol', to: bob, amount: 1, fee: 300, nonce: 0 });
      await chain.mempool([stale]);
      await wsMempool.atLeast(3);
      await chain.drop([stale.txid]);
      const mempoolEvents = await wsMempool.atLeast(4);
      assert.deepEqual(
        mempoolEvents.map((t) => [(t as { tx_id: string }).tx_id, (t as { tx_status: string }).tx_status]),
        [
          [first.txid, 'pending'],
          [first.txid, 'pending'],
          [stale.txid, 'pending'],
          [stale.txid, 'dropped_stale_garbage_collect'],
        ],
      );
      assert.deepEqual(mempoolEvents[3], await txNow(stale));
      assert.deepEqual(await ioMempool.atLeast(4), mempoolEvents);
    });

    test('block, microblock and STX balance events are what their routes answer', async () => {
      const { chain } = api;
      const bob = addressOf('bob');
      const dave = addressOf('dave');
      const wsBlock = new Received<unknown>();
      const ioBlock = new Received<unknown>();
      await ws.subscribeBlocks(wsBlock.push);
      await ws.subscribeMicroblocks(wsMicroblock.push);
      await ws.subscribeAddressBalanceUpdates(dave, wsBalance.push);
      io.socket.on('block', ioBlock.push);
      io.socket.on('microblock', ioMicroblock.push);
      io.socket.on(`address-stx-balance:${dave}` as never, (...args: unknown[]) => ioBalance.push(args));
      for (const topic of ['block', 'microblock', `address-stx-balance:${dave}`]) await ioSubscribed(topic);

      const streamed = await transferTx({ from: 'carol', to: bob, amount: 5, fee: 200, nonce: 0 });
      const microblock = await chain.microblock({ txs: [{ tx: streamed }], previous: stream });
      const microblockNow = await answer(`/extended/v1/microblock/${microblock.hash}`);
      assert.deepEqual(await wsMicroblock.atLeast(1), [microblockNow]);
      assert.deepEqual(await ioMicroblock.atLeast(1), [microblockNow]);

      const paid = await transferTx({ from: 'dave', to: bob, amount: 100, fee: 300, nonce: 0 });
      const block = await chain.block({ txs: [{ tx: paid, events: [ev.stxTransfer(dave, bob, 100)] }] });
      const blockNow = await answer(`/extended/v1/block/${block.block_hash}`);
      assert.deepEqual(await wsBlock.atLeast(1), [blockNow]);
      assert.deepEqual(await ioBlock.atLeast(1), [blockNow]);
      const balanceNow = await answer(`/extended/v1/address/${dave}/stx`);
      assert.deepEqual(await wsBalance.atLeast(1), [{ address: dave, ...(balanceNow as object) }]);
      assert.deepEqual(await ioBalance.atLeast(1), [[dave, balanceNow]]);
    });

    test('a micro-fork pushes the replacing microblock and the updates of the tx it orphaned', async () => {
      const { chain } = api;
      const bob = addressOf('bob');
      const dave = addressOf('dave');
      // what the second test left received: one of each
      assert.deepEqual(
        [wsMicroblock, ioMicroblock, wsBalance, ioBalance].map((r) => r.items.length),
        [1, 1, 1, 1],
      );
      const orphan = await transferTx({ from: 'dave', to: bob, amount: 7, fee: 300, nonce: 1 });
      const kept = await transferTx({ from: 'sponsor', to: bob, amount: 3, fee: 300, nonce: 0 });
      const wsOrphan = new Received<unknown>();
      const ioOrphan = new Received<unknown>();
      // socket.io's mempool topic, subscribed since the first test: what comes from now on
      const ioMempool = new Received<unknown>();
      io.socket.on('mempool', ioMempool.push);
      await ws.subscribeTxUpdates(orphan.txid, wsOrphan.push);
      io.socket.on(`transaction:${orphan.txid}` as never, ioOrphan.push);
      await ioSubscribed(`transaction:${orphan.txid}`);

      const streamed = await chain.microblock({
        txs: [{ tx: orphan, events: [ev.stxTransfer(dave, bob, 7)] }, { tx: kept }],
      });
      assert.deepEqual(
        (await wsMicroblock.atLeast(2))[1],
        await answer(`/extended/v1/microblock/${streamed.hash}`),
      );
      const [mined] = await wsOrphan.atLeast(1);
      assert.equal((mined as { microblock_hash: string }).microblock_hash, streamed.hash);
      // dave sent `orphan` in the microblock: his balance with the stream, the 7 µSTX and fee spent
      const streamedBalance = await answer(`/extended/v1/address/${dave}/stx?unanchored=true`);
      assert.equal((streamedBalance as { total_sent: string }).total_sent, '107');
      assert.deepEqual((await wsBalance.atLeast(2))[1], { address: dave, ...(streamedBalance as object) });
      assert.deepEqual((await ioBalance.atLeast(2))[1], [dave, streamedBalance]);

      // the miner re-streams sequence 0 without `orphan`: the replacing microblock is pushed, and `orphan`,
      // back in the mempool, is pushed as its route now answers it (so is its sender's balance)
      const replacing = await chain.microblock({ txs: [{ tx: kept }], sequence: 0 });
      const replacingNow = await answer(`/extended/v1/microblock/${replacing.hash}`);
      assert.equal((replacingNow as { microblock_sequence: number }).microblock_sequence, 0);
      assert.deepEqual((await wsMicroblock.atLeast(3))[2], replacingNow);
      assert.deepEqual((await ioMicroblock.atLeast(3))[2], replacingNow);
      const [, orphaned] = await wsOrphan.atLeast(2);
      assert.deepEqual(orphaned, await txNow(orphan));
      assert.equal((orphaned as { tx_status: string }).tx_status, 'pending');
      assert.deepEqual(await ioOrphan.atLeast(2), [mined, orphaned]);
      assert.deepEqual(await ioMempool.atLeast(1), [orphaned]);
      const balanceNow = await answer(`/extended/v1/address/${dave}/stx?unanchored=true`);
      // the 7 µSTX and 300 µSTX fee of `orphan`, pending again, no longer sent
      assert.equal((balanceNow as { pending_balance_outbound: string }).pending_balance_outbound, '307');
      assert.equal((balanceNow as { total_sent: string }).total_sent, '100');
      assert.deepEqual((await wsBalance.atLeast(3))[2], { address: dave, ...(balanceNow as object) });
      assert.deepEqual((await ioBalance.atLeast(3))[2], [dave, balanceNow]);
      stream = replacing;
    });

    test("a tx streamed in a microblock pushes its principals' address tx and balance events at once", async () => {
      const { chain } = api;
      const bob = addressOf('bob');
      const miner = addressOf('miner');
      const wsTxs = new Received<unknown>();
      const wsBalances = new Received<unknown>();
      const ioTxs = new Received<unknown[]>();
      const ioBalances = new Received<unknown[]>();
      /** the socket.io topics received from now on, in order (one socket: the order the server sent) */
      const ioOrder: string[] = [];
      const txTopic = `address-transaction:${miner}`;
      const balanceTopic = `address-stx-balance:${miner}`;
      await ws.subscribeAddressTransactions(miner, wsTxs.push);
      await ws.subscribeAddressBalanceUpdates(miner, wsBalances.push);
      io.socket.on('microblock', () => ioOrder.push('microblock'));
      io.socket.on('block', () => ioOrder.push('block'));
      io.socket.on(txTopic as never, (...args: unknown[]) => {
        ioOrder.push(txTopic);
        ioTxs.push(args);
      });
      io.socket.on(balanceTopic as never, (...args: unknown[]) => {
        ioOrder.push(balanceTopic);
        ioBalances.push(args);
      });
      for (const topic of [txTopic, balanceTopic]) await ioSubscribed(topic);

      const sent = await transferTx({ from: 'miner', to: bob, amount: 50, fee: 200, nonce: 0 });
      const streamed = await chain.microblock({
        txs: [{ tx: sent, events: [ev.stxTransfer(miner, bob, 50)] }],
        previous: stream,
      });
      const [wsTx] = await wsTxs.atLeast(1);
      const [wsBalance] = await wsBalances.atLeast(1);
      // what the routes answer now, the block that confirms the microblock still to come: the tx route shows
      // the microblock tx with or without `unanchored` (it takes none); the balance only with `unanchored=true`
      const txNow = await answer(`/extended/v1/address/${miner}/${sent.txid}/with_transfers`);
      const { tx } = txNow as { tx: { is_unanchored: boolean; microblock_hash: string } };
      assert.equal(tx.is_unanchored, true);
      assert.equal(tx.microblock_hash, streamed.hash);
      assert.equal((txNow as { stx_sent: string }).stx_sent, '250');
      assert.deepEqual(
        await answer(`/extended/v1/address/${miner}/${sent.txid}/with_transfers?unanchored=true`),
        txNow,
      );
      const balanceNow = await answer(`/extended/v1/address/${miner}/stx?unanchored=true`);
      assert.deepEqual(
        [balanceNow, await answer(`/extended/v1/address/${miner}/stx`)].map((b) => {
          const { balance, total_sent, total_fees_sent } = b as Record<string, string>;
          return [balance, total_sent, total_fees_sent];
        }),
        [
          ['-250', '50', '200'],
          ['0', '0', '0'],
        ],
      );
      const about = { address: miner, tx_id: sent.txid, tx_status: 'success', tx_type: 'token_transfer' };
      assert.deepEqual(wsTx, { ...about, ...(txNow as object) });
      assert.deepEqual(wsBalance, { address: miner, ...(balanceNow as object) });
      assert.deepEqual(await ioTxs.atLeast(1), [[miner, txNow]]);
      assert.deepEqual(await ioBalances.atLeast(1), [[miner, balanceNow]]);
      // in chain order: the microblock, then the events of its tx
      assert.deepEqual(ioOrder, ['microblock', txTopic, balanceTopic]);

      // the block that confirms it: the tx and the balance again, now anchored, once each
      await chain.block({ confirms: [stream, streamed] });
      await ioBalances.atLeast(2);
      const confirmedTx = await answer(`/extended/v1/address/${miner}/${sent.txid}/with_transfers`);
      assert.equal((confirmedTx as { tx: { is_unanchored: boolean } }).tx.is_unanchored, false);
      const confirmedBalance = await answer(`/extended/v1/address/${miner}/stx`);
      assert.equal((confirmedBalance as { balance: string }).balance, '-250');
      assert.deepEqual(ioOrder.slice(3), ['block', txTopic, balanceTopic]);
      assert.deepEqual(ioTxs.items, [
        [miner, txNow],
        [miner, confirmedTx],
      ]);
      assert.deepEqual(ioBalances.items, [
        [miner, balanceNow],
        [miner, confirmedBalance],
      ]);
      assert.deepEqual(await wsTxs.atLeast(2), [wsTx, { ...about, ...(confirmedTx as object) }]);
      assert.deepEqual(await wsBalances.atLeast(2), [
        wsBalance,
        { address: miner, ...(confirmedBalance as object) },
      ]);
    });
  });
}
