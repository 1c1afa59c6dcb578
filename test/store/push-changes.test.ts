import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { Ingestor } from '../../src/ingest/ingestor.js';
import {
  principalTxsInBlocks,
  principalTxsInMicroblocks,
  principalTxsInStream,
  readChangesSince,
  readPushCursor,
  type ChainChanges,
  type PrincipalTxRow,
  type PushCursor,
} from '../../src/store/read/push.js';
import type { Store } from '../../src/store/store.js';
import {
  addressOf,
  ev,
  TestChain,
  transferTx,
  type ChainBlock,
  type ChainMicroblock,
} from '../support/chain.js';
import { openTestStore, silentLogger, stopOwnCluster } from '../support/database.js';
import { testEngines } from '../support/engines.js';

// What live push reads (store/read/push.ts): from a cursor, what changed in the index, in one snapshot. A
// chain goes through the real ingest path one change at a time, and each round must name exactly the blocks
// that joined and left the canonical chain, the microblocks and the mempool messages since the last round,
// the state of a watched tx, and where the next round starts; a micro-fork resends the stream from the first
// sequence it replaced and names the replaced txs; a round over its bounds stops early and says so. The
// principals a streamed tx touches come from its staged rows while no block confirms it, from the block's after.

after(stopOwnCluster);

/**
 * A round's changes as plain values: blocks by height and hash with their txs, microblocks, the orphaned
 * stream (only when there is one), mempool.
 */
function summary(changes: ChainChanges) {
  const block = (b: ChainChanges['blocks'][number]) => [b.block_height, b.block_hash, b.tx_ids];
  return {
    orphaned: changes.orphaned.map(block),
    blocks: changes.blocks.map(block),
    microblocks: changes.microblocks.map((m) => [m.microblock_sequence, m.microblock_hash]),
    ...(changes.orphanedStream.microblock_hashes.length > 0 && { orphanedStream: changes.orphanedStream }),
    mempool: changes.mempool.map((m) => ({ added: m.added, dropped: m.dropped })),
  };
}

/**
 * Principal index rows as [tx id, block, microblock, its principals sorted], one per tx in the order of the
 * rows (the order of a tx's principals is not defined).
 */
function touched(rows: PrincipalTxRow[]) {
  const txs = new Map<string, [string, string, string, string[]]>();
  for (const r of rows) {
    const tx = txs.get(r.tx_id) ?? [r.tx_id, r.index_block_hash, r.microblock_hash, []];
    tx[3].push(r.principal);
    txs.set(r.tx_id, tx);
  }
  return [...txs.values()].map(([id, block, microblock, principals]) => [
    id,
    block,
    microblock,
    principals.sort(),
  ]);
}

for (const engine of testEngines(import.meta.url)) {
  describe(`live push reads (${engine})`, () => {
    let store: Store;
    let chain: TestChain;
    after(() => store?.close());

    test('each round names what changed since the last, a fork switch and microblocks included', async () => {
      store = await openTestStore(engine);
      chain = new TestChain(new Ingestor(store, { isMainnet: false, logger: silentLogger }));
      const alice = addressOf('alice');
      const bob = addressOf('bob');
      await chain.block({ txs: [] });
      const base = await chain.block({ txs: [] });
      let cursor: PushCursor = await readPushCursor(store.sql);
      assert.equal(cursor.tip.index_block_hash, base.index_block_hash);
      assert.equal(cursor.tip.microblock_sequence, -1);
      assert.equal(cursor.tip.microblock_hash, '');
      const tx = await transferTx({ from: 'alice', to: bob, amount: 100, fee: 300, nonce: 0 });
      const round = async () => {
        const changes = await readChangesSince(store.sql, cursor, [tx.txid]);
        assert.equal(changes.complete, true);
        cursor = changes.cursor;
        return changes;
      };
      const tipIs = (block: ChainBlock, microblock?: ChainMicroblock) =>
        assert.deepEqual(cursor.tip, {
          index_block_hash: block.index_block_hash,
          block_height: block.height,
          microblock_sequence: microblock?.sequence ?? -1,
          microblock_hash: microblock?.hash ?? '',
        });

      // nothing yet
      let changes = await round();
      assert.deepEqual(summary(changes), { orphaned: [], blocks: [], microblocks: [], mempool: [] });
      assert.equal(changes.txVersions.get(tx.txid), null);

      // the tx enters the mempool
      await chain.mempool([tx]);
      changes = await round();
      assert.deepEqual(summary(changes), {
        orphaned: [],
        blocks: [],
        microblocks: [],
        mempool: [{ added: [tx.txid], dropped: [] }],
      });
      // status 0: pending
      const pending = changes.txVersions.get(tx.txid);
      assert.match(pending ?? '', /^mempool:0:/);

      // mined in a block
      const mined = await chain.block({ txs: [{ tx, events: [ev.stxTransfer(alice, bob, 100)] }] });
      changes = await round();
      assert.deepEqual(summary(changes), {
        orphaned: [],
        blocks: [[mined.height, mined.block_hash, [tx.txid]]],
        microblocks: [],
        mempool: [],
      });
      assert.match(changes.txVersions.get(tx.txid) ?? '', new RegExp(`^mined:${mined.index_block_hash}:`));
      tipIs(mined);

      // a fork switch: the sibling and its child win, the mined block leaves the chain
      const sibling = await chain.block({ parent: base, txs: [] });
      assert.deepEqual(summary(await round()).blocks, [], 'a sibling at the tip height switches nothing');
      const child = await chain.block({ parent: sibling, txs: [] });
      changes = await round();
      assert.deepEqual(summary(changes), {
        orphaned: [[mined.height, mined.block_hash, [tx.txid]]],
        blocks: [
          [sibling.height, sibling.block_hash, []],
          [child.height, child.block_hash, []],
        ],
        microblocks: [],
        mempool: [],
      });
      // back in the mempool, as it was before it was mined
      assert.equal(changes.txVersions.get(tx.txid), pending);
      tipIs(child);

      // mined again, in microblocks streamed on the new tip
      const first = await chain.microblock({ txs: [{ tx, events: [ev.stxTransfer(alice, bob, 100)] }] });
      changes = await round();
      assert.deepEqual(summary(changes).microblocks, [[0, first.hash]]);
      // mined in a microblock no block has confirmed yet: no anchor block
      assert.match(changes.txVersions.get(tx.txid) ?? '', new RegExp(`^mined::${first.hash}:`));
      tipIs(child, first);
      const other = await transferTx({ from: 'carol', to: bob, amount: 1, fee: 300, nonce: 0 });
      const second = await chain.microblock({ txs: [{ tx: other }], previous: first });
      assert.deepEqual(summary(await round()).microblocks, [[1, second.hash]], 'only the one not pushed');
      tipIs(child, second);

      // a micro-fork from sequence 0: the miner re-streams the tx without `other`; both pushed microblocks
      // leave the stream, and only `other` left the chain (the tx is mined again, in the replacing one)
      const restream = await chain.microblock({
        txs: [{ tx, events: [ev.stxTransfer(alice, bob, 100)] }],
        sequence: 0,
      });
      changes = await round();
      assert.deepEqual(summary(changes), {
        orphaned: [],
        blocks: [],
        microblocks: [[0, restream.hash]],
        orphanedStream: { microblock_hashes: [first.hash, second.hash], tx_ids: [other.txid] },
        mempool: [],
      });
      assert.match(changes.txVersions.get(tx.txid) ?? '', new RegExp(`^mined::${restream.hash}:`));
      tipIs(child, restream);

      // a micro-fork from sequence 1: the stream is sent again from there, not from 0
      const third = await chain.microblock({ txs: [{ tx: other }], previous: restream });
      assert.deepEqual(summary(await round()).microblocks, [[1, third.hash]]);
      const lone = await transferTx({ from: 'sponsor', to: bob, amount: 1, fee: 300, nonce: 0 });
      const fork = await chain.microblock({ txs: [{ tx: lone }], previous: restream });
      assert.equal(fork.sequence, 1);
      changes = await round();
      assert.deepEqual(summary(changes), {
        orphaned: [],
        blocks: [],
        microblocks: [[1, fork.hash]],
        orphanedStream: { microblock_hashes: [third.hash], tx_ids: [other.txid] },
        mempool: [],
      });
      tipIs(child, fork);
      assert.deepEqual(summary(await round()).microblocks, [], 'a micro-fork is pushed once');

      // a block that confirms less of the stream than was pushed: the rest leaves the chain as a micro-fork's
      const confirming = await chain.block({ confirms: [restream] });
      changes = await round();
      assert.deepEqual(summary(changes), {
        orphaned: [],
        blocks: [[confirming.height, confirming.block_hash, [tx.txid]]],
        microblocks: [],
        orphanedStream: { microblock_hashes: [fork.hash], tx_ids: [lone.txid] },
        mempool: [],
      });
      assert.match(
        changes.txVersions.get(tx.txid) ?? '',
        new RegExp(`^mined:${confirming.index_block_hash}:`),
      );
      tipIs(confirming);

      // a fork switch that orphans the pushed tip orphans the stream pushed on it too
      const late = await chain.microblock({ txs: [{ tx: lone }] });
      assert.deepEqual(summary(await round()).microblocks, [[0, late.hash]]);
      tipIs(confirming, late);
      const rival = await chain.block({ parent: child, txs: [] });
      const rivalChild = await chain.block({ parent: rival, txs: [] });
      changes = await round();
      assert.deepEqual(summary(changes), {
        orphaned: [[confirming.height, confirming.block_hash, [tx.txid]]],
        blocks: [
          [rival.height, rival.block_hash, []],
          [rivalChild.height, rivalChild.block_hash, []],
        ],
        microblocks: [],
        orphanedStream: { microblock_hashes: [late.hash], tx_ids: [lone.txid] },
        mempool: [],
      });
      tipIs(rivalChild);

      // a dropped tx
      const stale = await transferTx({ from: 'dave', to: bob, amount: 1, fee: 300, nonce: 0 });
      await chain.mempool([stale]);
      await chain.drop([stale.txid]);
      assert.deepEqual(summary(await round()).mempool, [
        { added: [stale.txid], dropped: [] },
        { added: [], dropped: [stale.txid] },
      ]);
    });

    test('a streamed tx touches principals from its staged rows until a block confirms it', async () => {
      const alice = addressOf('alice');
      const bob = addressOf('bob');
      const carol = addressOf('carol');
      const miner = addressOf('miner');
      const everyone = [alice, bob, carol, miner];
      const start = await readPushCursor(store.sql);
      const sent = await transferTx({ from: 'miner', to: bob, amount: 50, fee: 200, nonce: 0 });
      const other = await transferTx({ from: 'alice', to: carol, amount: 5, fee: 200, nonce: 1 });
      const first = await chain.microblock({ txs: [{ tx: sent, events: [ev.stxTransfer(miner, bob, 50)] }] });
      const second = await chain.microblock({ txs: [{ tx: other }], previous: first });
      assert.deepEqual(
        touched(await principalTxsInMicroblocks(store.sql, [first.hash, second.hash], everyone)),
        [
          [sent.txid, '', first.hash, [bob, miner].sort()],
          [other.txid, '', second.hash, [alice, carol].sort()],
        ],
      );
      assert.deepEqual(touched(await principalTxsInMicroblocks(store.sql, [first.hash], [alice])), []);

      // a micro-fork from sequence 0 streams `sent` again without `other`: of the orphaned stream, only
      // `other` left the chain, so only its principals are touched
      const cursor = (await readChangesSince(store.sql, start)).cursor;
      const restream = await chain.microblock({
        txs: [{ tx: sent, events: [ev.stxTransfer(miner, bob, 50)] }],
        sequence: 0,
      });
      const changes = await readChangesSince(store.sql, cursor);
      assert.deepEqual(changes.orphanedStream, {
        microblock_hashes: [first.hash, second.hash],
        tx_ids: [other.txid],
      });
      assert.deepEqual(touched(await principalTxsInStream(store.sql, changes.orphanedStream, everyone)), [
        [other.txid, '', second.hash, [alice, carol].sort()],
      ]);

      // a reader catching up reads the stream and the block that confirmed it in one round: the streamed
      // tx's principals are the block's, the microblock has no staged row left (pushed once, with the block)
      const confirming = await chain.block({ confirms: [restream] });
      const caughtUp = await readChangesSince(store.sql, start);
      assert.deepEqual(summary(caughtUp).microblocks, [[0, restream.hash]]);
      assert.deepEqual(summary(caughtUp).blocks, [[confirming.height, confirming.block_hash, [sent.txid]]]);
      assert.deepEqual(touched(await principalTxsInMicroblocks(store.sql, [restream.hash], everyone)), []);
      assert.deepEqual(
        touched(await principalTxsInBlocks(store.sql, [confirming.index_block_hash], everyone)),
        [[sent.txid, confirming.index_block_hash, restream.hash, [bob, miner].sort()]],
      );
    });

    test('a round over its bounds stops at the first change left out; the next goes on from there', async () => {
      let cursor = await readPushCursor(store.sql);
      const above: ChainBlock[] = [];
      for (let i = 0; i < 3; i++) above.push(await chain.block({ txs: [] }));
      const limits = { blocks: 1, messages: 1000 };
      const seen: string[] = [];
      for (let rounds = 0; rounds < above.length; rounds++) {
        const changes = await readChangesSince(store.sql, cursor, [], limits);
        assert.equal(changes.complete, rounds === above.length - 1, `round ${rounds}`);
        seen.push(...changes.blocks.map((b) => b.block_hash));
        cursor = changes.cursor;
      }
      assert.deepEqual(
        seen,
        above.map((b) => b.block_hash),
      );
    });
  });
}
