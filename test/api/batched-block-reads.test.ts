import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import type { Sql } from '../../src/store/db.js';
import {
  batchedCanonicalBlockReads,
  findCanonicalBlock,
  type BlockLocator,
} from '../../src/store/read/blocks.js';
import { sameAnswersTogetherAndAlone, startTestApi } from '../support/api.js';
import { openTestDatabase, stopOwnCluster } from '../support/database.js';
import { testEngines } from '../support/engines.js';

// `GET /extended/v2/blocks/:height_or_hash` reads the blocks of requests that arrive together with one
// statement (`batchedCanonicalBlockReads`, store/read/blocks.ts), a fast path beside `findCanonicalBlock`:
// this proves both give the same row (or none) for every block of recorded chains (orphaned blocks too) named
// by its height, its block hash or its index block hash, and for heights and hashes naming no block, asked
// together in one turn; and that the route's answers are the same bytes and ETags whether its requests arrive
// one at a time or all together.

after(stopOwnCluster);

const FIXTURES = ['mainnet-reorg-scenario1', 'regtest-env-pox-4-stack-stx-in-reward-phase-S1'];

const UNKNOWN_HASHES = ['0x' + 'ab'.repeat(32), '0x' + '00'.repeat(32)];

interface StoredBlock {
  block_height: number;
  block_hash: string;
  index_block_hash: string;
  canonical: boolean;
}

/** The heights and the hashes (block and index block hash) of the canonical blocks. */
function canonicalNames(blocks: StoredBlock[]) {
  const canonical = blocks.filter((b) => b.canonical);
  return {
    heights: new Set(canonical.map((b) => b.block_height)),
    hashes: new Set(canonical.flatMap((b) => [b.block_hash, b.index_block_hash])),
  };
}

for (const engine of testEngines(import.meta.url)) {
  for (const fixture of FIXTURES) {
    describe(`block reads batched per turn (${fixture}, ${engine})`, () => {
      test('give the rows findCanonicalBlock gives, for every block by height and either hash, in one statement per batch', async () => {
        const api = await startTestApi({ engine, fixture });
        try {
          const { store } = api;
          const blocks = await store.sql<StoredBlock[]>`
            SELECT block_height, block_hash, index_block_hash, canonical FROM blocks
            ORDER BY block_height, index_block_hash`;
          const tip = Math.max(...blocks.map((b) => b.block_height));
          assert.ok(blocks.length >= 5, `${fixture} has blocks (${blocks.length})`);
          const asked: Exclude<BlockLocator, { latest: true }>[] = [
            ...blocks.flatMap((b) => [
              { height: b.block_height },
              { hash: b.block_hash },
              { hash: b.index_block_hash },
            ]),
            { height: tip + 1 },
            { height: 2_147_483_647 },
            ...UNKNOWN_HASHES.map((hash) => ({ hash })),
          ];
          let batches = 0;
          const read = batchedCanonicalBlockReads(() => {
            batches += 1;
            return store.sql;
          });
          // every locator in one turn, each twice (heights and hashes mixed): one batch, one statement
          const locators = [...asked, ...asked.toReversed()];
          const rows = await Promise.all(locators.map((at) => read(at)));
          assert.equal(batches, 1, 'one statement for the turn');
          let found = 0;
          let absent = 0;
          for (const [i, at] of locators.entries()) {
            const alone = await findCanonicalBlock(store.sql, at);
            assert.deepEqual(rows[i], alone, JSON.stringify(at));
            if (alone) {
              found += 1;
              assert.equal(alone.canonical, true);
            } else absent += 1;
          }
          // the comparison covered every canonical block by each of its three names, and names of none
          const { heights, hashes } = canonicalNames(blocks);
          const named = asked.filter((at) => ('height' in at ? heights.has(at.height) : hashes.has(at.hash)));
          assert.ok(named.length >= 3 * heights.size, `named (${named.length})`);
          assert.equal(found, 2 * named.length);
          assert.equal(absent, 2 * (asked.length - named.length));
          assert.ok(asked.length - named.length >= 2 + UNKNOWN_HASHES.length);
          if (fixture === 'mainnet-reorg-scenario1') {
            assert.ok(heights.size < blocks.length, 'orphaned blocks are asked for by their hashes');
          }

          // a read alone in its turn: its own statement; `latest` is never batched
          batches = 0;
          const [first] = blocks;
          assert.deepEqual(
            await read({ hash: first.index_block_hash }),
            await findCanonicalBlock(store.sql, { hash: first.index_block_hash }),
          );
          assert.equal(batches, 1);
          const [latest, height] = await Promise.all([read({ latest: true }), read({ height: tip })]);
          assert.deepEqual(latest, await findCanonicalBlock(store.sql, { latest: true }));
          assert.equal(latest?.block_height, tip);
          assert.deepEqual(height, latest);
          assert.equal(batches, 3, '`latest` and the height each read alone');
        } finally {
          await api.close();
        }
      });

      test('the route answers the same bytes and ETags to requests arriving together as one at a time', async () => {
        let blocks: StoredBlock[] = [];
        const statuses = await sameAnswersTogetherAndAlone({ engine, fixture }, async (store) => {
          blocks = await store.sql<StoredBlock[]>`
            SELECT block_height, block_hash, index_block_hash, canonical FROM blocks
            ORDER BY block_height, index_block_hash`;
          return [
            ...blocks.flatMap((b) => [
              `/extended/v2/blocks/${b.block_height}`,
              `/extended/v2/blocks/${b.block_hash}`,
              `/extended/v2/blocks/${b.index_block_hash.slice(2).toUpperCase()}`,
            ]),
            '/extended/v2/blocks/latest',
            '/extended/v2/blocks/99999',
            ...UNKNOWN_HASHES.map((hash) => `/extended/v2/blocks/${hash}`),
          ];
        });
        const { heights, hashes } = canonicalNames(blocks);
        const named = blocks.flatMap((b) => [
          heights.has(b.block_height),
          hashes.has(b.block_hash),
          hashes.has(b.index_block_hash),
        ]);
        assert.deepEqual(statuses, [
          ...named.map((found) => (found ? 200 : 404)),
          200,
          404,
          ...UNKNOWN_HASHES.map(() => 404),
        ]);
      });
    });
  }

  test(`a failed batch statement fails every read of the batch (${engine})`, async () => {
    const db = await openTestDatabase(engine);
    await db.close();
    const read = batchedCanonicalBlockReads(() => db.sql as Sql);
    const results = await Promise.allSettled([read({ height: 1 }), read({ hash: UNKNOWN_HASHES[0] })]);
    assert.deepEqual(
      results.map((r) => r.status),
      ['rejected', 'rejected'],
    );
  });
}
