import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import type { Sql } from '../../src/store/db.js';
import { batchedBlockByBurnHeightReads, findBlockByBurnHeight } from '../../src/store/read/blocks.js';
import { sameAnswersTogetherAndAlone, startTestApi } from '../support/api.js';
import { openTestDatabase, stopOwnCluster } from '../support/database.js';
import { testEngines } from '../support/engines.js';

// `GET /extended/v1/block/by_burn_block_height/:h` reads the blocks of requests that arrive together with one
// statement (`batchedBlockByBurnHeightReads`, store/read/blocks.ts), a fast path beside `findBlockByBurnHeight`:
// this proves both give the same block (or none) for every burn height of recorded chains (reorgs, orphaned
// blocks, blocks that accepted microblocks, whose tx counts are read again, burn heights of several blocks) and
// for burn heights of no block, asked together in one turn; that a burn height whose blocks forked names the
// canonical one either way; and that the route's answers are the same bytes and ETags whether its requests
// arrive one at a time or all together.

after(stopOwnCluster);

/** with the blocks that accepted microblocks; several canonical blocks at one burn height (fuzzed: 3) */
const FIXTURES = ['mainnet-reorg-scenario1', 'mainnet-out-of-order-microblock', 'fuzzed-transactions-1'];
const ROUTE = '/extended/v1/block/by_burn_block_height/';
/** the asks below (every burn height twice) whose block accepted microblocks, by fixture */
const ACCEPTING_ASKS: Record<string, number> = {
  'mainnet-reorg-scenario1': 36,
  'mainnet-out-of-order-microblock': 2,
  'fuzzed-transactions-1': 0,
};

/** Every burn height a block of the chain has (orphaned blocks' too), and burn heights of none. */
async function burnHeights(sql: Sql) {
  const rows = await sql<{ burn_block_height: number }[]>`
    SELECT DISTINCT burn_block_height FROM blocks ORDER BY 1`;
  const known = rows.map((r) => r.burn_block_height);
  const unknown = [0, Math.max(...known) + 1, 2_147_483_647].filter((h) => !known.includes(h));
  return { known, unknown };
}

for (const engine of testEngines(import.meta.url)) {
  for (const fixture of FIXTURES) {
    describe(`block by burn height reads batched per turn (${fixture}, ${engine})`, () => {
      test('give the blocks findBlockByBurnHeight gives, for every burn height, in one statement per batch', async () => {
        const api = await startTestApi({ engine, fixture });
        try {
          const { store } = api;
          const { known, unknown } = await burnHeights(store.sql);
          assert.ok(known.length >= 1, `${fixture} has burn heights`);
          assert.ok(unknown.length >= 2);
          let batches = 0;
          // the statements a batch runs, counted on the real connection pool (each read is a `sql.unsafe`)
          let statements = 0;
          const counted = new Proxy(store.sql, {
            get(target, key, receiver) {
              if (key !== 'unsafe') return Reflect.get(target, key, receiver) as unknown;
              return (...args: Parameters<Sql['unsafe']>) => {
                statements += 1;
                return target.unsafe(...args);
              };
            },
          });
          const read = batchedBlockByBurnHeightReads(() => {
            batches += 1;
            return counted;
          });
          // every burn height in one turn, each twice: one batch
          const asked = [...known, ...unknown];
          const heights = [...asked, ...asked.toReversed()];
          const blocks = await Promise.all(heights.map((h) => read(h)));
          assert.equal(batches, 1, 'one batch for the turn');
          let found = 0;
          let accepting = 0;
          for (const [i, height] of heights.entries()) {
            const alone = await findBlockByBurnHeight(store.sql, height);
            assert.deepEqual(blocks[i], alone, `${height}`);
            if (alone) {
              found += 1;
              assert.equal(alone.burn_block_height, height);
              if (alone.microblocks_accepted.length > 0) accepting += 1;
            }
          }
          assert.equal(found, 2 * known.length);
          // each asked twice: the blocks that accepted microblocks (18 distinct in the first chain) are read
          // again with their counts, all of them by one statement (not one each)
          assert.equal(accepting, ACCEPTING_ASKS[fixture]);
          assert.equal(
            statements,
            accepting > 0 ? 2 : 1,
            'the blocks, then the accepting ones with their counts',
          );

          // a read alone in its turn: its own statement
          batches = 0;
          statements = 0;
          assert.deepEqual(await read(known[0]), await findBlockByBurnHeight(store.sql, known[0]));
          assert.equal(batches, 1);
          assert.equal(
            statements,
            (await findBlockByBurnHeight(store.sql, known[0]))?.microblocks_accepted.length ? 2 : 1,
          );
        } finally {
          await api.close();
        }
      });

      test('the route answers the same bytes and ETags to requests arriving together as one at a time', async () => {
        let known: number[] = [];
        let unknown: number[] = [];
        const statuses = await sameAnswersTogetherAndAlone({ engine, fixture }, async (store) => {
          ({ known, unknown } = await burnHeights(store.sql));
          return [...known, ...unknown, ...known].map((h) => `${ROUTE}${h}`);
        });
        assert.deepEqual(statuses, [
          ...known.map(() => 200),
          ...unknown.map(() => 404),
          ...known.map(() => 200),
        ]);
      });
    });
  }

  test(`a burn height whose blocks forked names the canonical one, batched or alone (${engine})`, async () => {
    const { store, chain, close } = await startTestApi({ engine });
    try {
      const first = await chain.block();
      const orphan = await chain.block({ parent: first });
      const canonical = await chain.block({ parent: first });
      const next = await chain.block({ parent: canonical });
      // the orphan first at its burn height, with the same block height as the canonical block
      assert.equal(orphan.burn_block_height, canonical.burn_block_height);
      const read = batchedBlockByBurnHeightReads(() => store.sql);
      const heights = [next.burn_block_height, canonical.burn_block_height, first.burn_block_height];
      const together = await Promise.all(heights.map((h) => read(h)));
      assert.deepEqual(
        together.map((b) => [b?.index_block_hash, b?.canonical]),
        [next, canonical, first].map((b) => [b.index_block_hash, true]),
      );
      for (const [i, h] of heights.entries())
        assert.deepEqual(together[i], await findBlockByBurnHeight(store.sql, h));
    } finally {
      await close();
    }
  });

  test(`a failed batch statement fails every read of the batch (${engine})`, async () => {
    const db = await openTestDatabase(engine);
    await db.close();
    const read = batchedBlockByBurnHeightReads(() => db.sql as Sql);
    const results = await Promise.allSettled([read(1), read(2)]);
    assert.deepEqual(
      results.map((r) => r.status),
      ['rejected', 'rejected'],
    );
  });
}
