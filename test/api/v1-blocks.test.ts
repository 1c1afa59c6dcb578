import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { DEPRECATION_WARNING } from '../../src/api/plugins/conventions.js';
import { isoTime } from '../../src/api/render/time.js';
import { BlockV1, Microblock } from '../../src/api/schemas/blocks.js';
import { getJson, startTestApi, type TestApi } from '../support/api.js';
import {
  addressOf,
  transferWithEvent,
  type ChainBlock,
  type ChainMicroblock,
  type MinedTx,
} from '../support/chain.js';
import { normalize } from '../conformance/harness.js';
import { stopOwnCluster } from '../support/database.js';
import { testEngines } from '../support/engines.js';
import { loadGolden } from '../support/shared.js';

// The v1 block routes (by hash, height, burn block hash, burn block height: one answer) and the microblock
// route, on a chain with a microblock stream (streamed, then partly confirmed: the rest orphaned), a
// microblock first seen in its confirming block, and a sibling block. The goldens ask neither the three
// other v1 block routes nor the microblock (only by burn block height, whose answer conformance checks): the
// answers here are checked against upstream's rules (docs/upstream.md C.18, C.19) and the keys against its
// schemas' order; and, on a recorded chain with a reorg and microblocks, against the original's answers by burn
// block height: the same block by hash, height and burn block hash is the same answer, and the microblocks
// those blocks accepted are what the block says of them.

/** A recorded chain whose goldens hold blocks by burn height: a reorg, confirmed microblocks (48 KB). */
const FIXTURE = 'mainnet-reorg-scenario2';

after(stopOwnCluster);

const BOB = addressOf('bob');
const pay = (from: 'alice' | 'carol' | 'dave', nonce: number) =>
  transferWithEvent({ from, to: BOB, amount: 100 + nonce, fee: 200, nonce });

/** GET `url`, which must answer 200. */
async function ok(api: TestApi, url: string) {
  const res = await getJson(api.app, url);
  assert.equal(res.status, 200, `${url}: ${JSON.stringify(res.body)}`);
  return res;
}

const V1_BLOCK_KEYS = Object.keys(BlockV1.properties);
const MICROBLOCK_KEYS = Object.keys(Microblock.properties);

for (const engine of testEngines(import.meta.url)) {
  describe(`v1 block and microblock routes (${engine})`, () => {
    let api: TestApi;
    let b1: ChainBlock, b2: ChainBlock, b3: ChainBlock, sibling: ChainBlock;
    let m0: ChainMicroblock, m1: ChainMicroblock, unstreamed: ChainMicroblock;
    let txs: Record<'a0' | 'a1' | 'a2' | 'c0' | 'd0', MinedTx>;
    /** the burn block the `/new_microblocks` of m0 names (its parent's, as a node sends it) */
    let m0Burn: { hash: string; height: number; time: number };
    /** m0 as asked before its block came (the second ask is cached) */
    let m0Unconfirmed: Record<string, unknown>;
    let m0UnconfirmedTag: string | undefined;

    const get200 = (url: string) => ok(api, url);

    before(async () => {
      api = await startTestApi({ engine });
      const [a0, a1, a2, c0, d0] = await Promise.all([
        pay('alice', 0),
        pay('alice', 1),
        pay('alice', 2),
        pay('carol', 0),
        pay('dave', 0),
      ]);
      txs = { a0, a1, a2, c0, d0 };
      b1 = await api.chain.block({ txs: [a0] });
      const built = api.chain.buildMicroblock({ txs: [a1] });
      await api.chain.send(built.message);
      m0 = built.microblock;
      const sent = built.message.payload as {
        burn_block_hash: string;
        burn_block_height: number;
        burn_block_timestamp: number;
      };
      m0Burn = {
        hash: sent.burn_block_hash,
        height: sent.burn_block_height,
        time: sent.burn_block_timestamp,
      };
      m1 = await api.chain.microblock({ txs: [a2], previous: m0 });
      await get200(`/extended/v1/microblock/${m0.hash}`);
      const asked = await get200(`/extended/v1/microblock/${m0.hash}`);
      m0Unconfirmed = asked.body;
      m0UnconfirmedTag = asked.headers.etag as string | undefined;
      // b2 confirms m0 only: m1 is orphaned
      b2 = await api.chain.block({ txs: [c0], confirms: [m0] });
      // a microblock the node never announced: first seen in the block that confirms it
      unstreamed = api.chain.buildMicroblock({ txs: [d0], parent: b2 }).microblock;
      b3 = await api.chain.block({ confirms: [unstreamed] });
      sibling = await api.chain.block({ parent: b2 });
    });
    after(() => api?.close());

    test('the four v1 block routes give one answer, in upstream key order, deprecated', async () => {
      const byHash = await get200(`/extended/v1/block/${b2.block_hash}`);
      assert.deepEqual(Object.keys(byHash.body), V1_BLOCK_KEYS);
      assert.equal(byHash.headers.warning, DEPRECATION_WARNING);
      for (const url of [
        `/extended/v1/block/by_height/2`,
        `/extended/v1/block/by_burn_block_hash/${b2.burn_block_hash}`,
        `/extended/v1/block/by_burn_block_height/${b2.burn_block_height}`,
        `/extended/v1/block/${b2.block_hash.toUpperCase().replace('0X', '0x')}`,
      ]) {
        const res = await get200(url);
        assert.deepEqual(res.body, byHash.body, url);
        assert.equal(res.headers.etag, `"${b3.index_block_hash}"`, url);
      }
      const block = byHash.body as Record<string, unknown>;
      assert.equal(block.canonical, true);
      assert.equal(block.height, 2);
      assert.equal(block.hash, b2.block_hash);
      assert.equal(block.index_block_hash, b2.index_block_hash);
      assert.equal(block.parent_block_hash, b1.block_hash);
      assert.equal(block.burn_block_hash, b2.burn_block_hash);
      assert.equal(block.burn_block_time_iso, isoTime(b2.burn_block_time));
      // its own tx, then the confirmed microblock's: newest first
      assert.deepEqual(block.txs, [txs.c0.tx.txid, txs.a1.tx.txid]);
      assert.equal(block.parent_microblock_hash, m0.hash);
      assert.equal(block.parent_microblock_sequence, 0);
      assert.deepEqual(block.microblocks_accepted, [m0.hash]);
      // the stream on b2 that b3 confirms
      assert.deepEqual(block.microblocks_streamed, [unstreamed.hash]);
      assert.deepEqual(block.microblock_tx_count, { [m0.hash]: 1 });
      // b1: the stream on it, m0 only (m1 orphaned)
      const first = (await get200(`/extended/v1/block/${b1.block_hash}`)).body;
      assert.deepEqual(first.microblocks_streamed, [m0.hash]);
      assert.deepEqual(first.txs, [txs.a0.tx.txid]);
    });

    test('a height or hash a fork shares names the canonical block; one only a fork has, that block', async () => {
      assert.equal((await get200('/extended/v1/block/by_height/3')).body.hash, b3.block_hash);
      const orphan = (await get200(`/extended/v1/block/${sibling.block_hash}`)).body;
      assert.deepEqual(
        [orphan.canonical, orphan.height, orphan.index_block_hash, orphan.txs],
        [false, 3, sibling.index_block_hash, []],
      );
      const byBurnHash = await get200(`/extended/v1/block/by_burn_block_hash/${sibling.burn_block_hash}`);
      assert.equal(byBurnHash.body.index_block_hash, sibling.index_block_hash);
    });

    test('404, 400 and redirects as upstream', async () => {
      const unknown = `0x${'ab'.repeat(32)}`;
      const notFound = (message: string) => ({ statusCode: 404, error: 'Not Found', message });
      for (const [url, message] of [
        [`/extended/v1/block/${unknown}`, 'cannot find block by hash'],
        ['/extended/v1/block/0xabcd', 'cannot find block by hash'],
        ['/extended/v1/block/by_height/99', 'cannot find block by height'],
        [`/extended/v1/block/by_burn_block_hash/${unknown}`, 'cannot find block by burn block hash'],
        [`/extended/v1/microblock/${unknown}`, 'cannot find microblock by hash'],
      ]) {
        const res = await getJson(api.app, url);
        assert.deepEqual([res.status, res.body], [404, notFound(message)], url);
      }
      for (const url of [
        '/extended/v1/block/0xzz',
        '/extended/v1/block/0xabc',
        '/extended/v1/block/by_height/-1',
        '/extended/v1/block/by_height/abc',
        '/extended/v1/block/by_burn_block_hash/0xzz',
        '/extended/v1/microblock/0xzz',
      ]) {
        const res = await getJson(api.app, url);
        assert.equal(res.status, 400, url);
        assert.equal(res.body.statusCode, 400, url);
      }
      for (const [url, location] of [
        [`/extended/v1/block/${b2.block_hash.slice(2)}`, `/extended/v1/block/${b2.block_hash}`],
        [
          `/extended/v1/block/by_burn_block_hash/${b2.burn_block_hash.slice(2)}`,
          `/extended/v1/block/by_burn_block_hash/${b2.burn_block_hash}`,
        ],
        [`/extended/v1/microblock/${m0.hash.slice(2)}`, `/extended/v1/microblock/${m0.hash}`],
      ]) {
        const res = await getJson(api.app, url);
        assert.deepEqual([res.status, res.headers.location], [302, location], url);
      }
    });

    test('a microblock streamed and not confirmed yet: no block hash, tagged by the stream', () => {
      assert.deepEqual(Object.keys(m0Unconfirmed), MICROBLOCK_KEYS);
      assert.deepEqual(m0Unconfirmed, {
        canonical: true,
        microblock_canonical: true,
        microblock_hash: m0.hash,
        microblock_sequence: 0,
        microblock_parent_hash: b1.block_hash,
        block_height: 2,
        parent_block_height: 1,
        parent_block_hash: b1.block_hash,
        parent_burn_block_hash: m0Burn.hash,
        parent_burn_block_time: m0Burn.time,
        parent_burn_block_time_iso: isoTime(m0Burn.time),
        parent_burn_block_height: m0Burn.height,
        block_hash: '0x',
        txs: [txs.a1.tx.txid],
      });
      assert.equal(m0UnconfirmedTag, `"${m1.hash}"`);
    });

    test('confirmed by a block: that block; the rest of the stream orphaned by it, with no txs', async () => {
      const confirmed = await get200(`/extended/v1/microblock/${m0.hash}`);
      assert.deepEqual(confirmed.body, {
        ...m0Unconfirmed,
        block_hash: b2.block_hash,
      });
      const etag = confirmed.headers.etag as string;
      assert.equal(etag, `"${b3.index_block_hash}"`);
      const again = await api.app.inject({
        method: 'GET',
        url: `/extended/v1/microblock/${m0.hash}`,
        headers: { 'if-none-match': etag },
      });
      assert.equal(again.statusCode, 304);
      const orphaned = (await get200(`/extended/v1/microblock/${m1.hash}`)).body;
      assert.deepEqual(
        [
          orphaned.canonical,
          orphaned.microblock_canonical,
          orphaned.microblock_sequence,
          orphaned.block_hash,
        ],
        [true, false, 1, b2.block_hash],
      );
      assert.deepEqual(orphaned.txs, []);
      assert.equal(orphaned.microblock_parent_hash, m0.hash);
    });

    test('first seen in its confirming block: the parent burn block from the block message', async () => {
      const res = await get200(`/extended/v1/microblock/${unstreamed.hash}`);
      assert.equal(res.headers.warning, undefined);
      assert.deepEqual(res.body, {
        canonical: true,
        microblock_canonical: true,
        microblock_hash: unstreamed.hash,
        microblock_sequence: 0,
        microblock_parent_hash: b2.block_hash,
        block_height: 3,
        parent_block_height: 2,
        parent_block_hash: b2.block_hash,
        parent_burn_block_hash: b2.burn_block_hash,
        parent_burn_block_time: b2.burn_block_time,
        parent_burn_block_time_iso: isoTime(b2.burn_block_time),
        parent_burn_block_height: b2.burn_block_height,
        block_hash: b3.block_hash,
        txs: [txs.d0.tx.txid],
      });
    });
  });

  describe(`v1 block and microblock routes against the original's blocks (${FIXTURE}, ${engine})`, () => {
    let api: TestApi;
    before(async () => {
      api = await startTestApi({ engine, fixture: FIXTURE });
    });
    after(() => api?.close());

    const goldenBlocks = loadGolden(FIXTURE).filter(
      (r) => r.status === 200 && r.path.startsWith('/extended/v1/block/by_burn_block_height/'),
    );

    test('by hash, height and burn block hash: the golden block of its burn height', async () => {
      let compared = 0;
      for (const record of goldenBlocks) {
        const block = record.body as {
          hash: string;
          height: number;
          burn_block_hash: string;
          canonical: boolean;
        };
        // a height names its canonical block: the golden one when it is canonical
        const urls = [
          `/extended/v1/block/${block.hash}`,
          `/extended/v1/block/by_burn_block_hash/${block.burn_block_hash}`,
        ];
        if (block.canonical) urls.push(`/extended/v1/block/by_height/${block.height}`);
        for (const url of urls) {
          const ours = (await ok(api, url)).body;
          assert.deepEqual(normalize(record.path, ours), normalize(record.path, record.body), url);
          assert.deepEqual(Object.keys(ours), Object.keys(record.body as object), url);
          compared++;
        }
      }
      assert.ok(compared >= 12, `${compared} answers compared`);
    });

    test('each microblock a canonical golden block accepted: confirmed by it, its txs as it counts them', async () => {
      let microblocks = 0;
      for (const record of goldenBlocks) {
        const block = record.body as {
          hash: string;
          height: number;
          parent_block_hash: string;
          canonical: boolean;
          microblocks_accepted: string[];
          microblock_tx_count: Record<string, number>;
        };
        // a microblock names one block: the canonical one of those that accepted it (a sibling did too)
        if (!block.canonical) continue;
        for (const [sequence, hash] of block.microblocks_accepted.entries()) {
          const microblock = (await ok(api, `/extended/v1/microblock/${hash}`)).body;
          assert.deepEqual(
            [
              microblock.microblock_hash,
              microblock.microblock_sequence,
              microblock.canonical,
              microblock.microblock_canonical,
              microblock.block_hash,
              microblock.block_height,
              microblock.parent_block_hash,
              microblock.txs.length,
            ],
            [
              hash,
              sequence,
              block.canonical,
              true,
              block.hash,
              block.height,
              block.parent_block_hash,
              block.microblock_tx_count[hash],
            ],
            hash,
          );
          microblocks++;
        }
      }
      assert.ok(microblocks >= 1, `${microblocks} microblocks`);
    });
  });
}
