import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { EVENT_LIMIT_DEFAULT } from '../../src/api/schemas/params.js';
import type { Sql } from '../../src/store/db.js';
import type { Store } from '../../src/store/store.js';
import { txByIdRenderings } from '../../src/api/cache/rendered-txs.js';
import {
  batchedMinedTxReads,
  batchedMinedTxVersionReads,
  findMinedTx,
  findMinedTxVersion,
  type EventPage,
} from '../../src/store/read/txs.js';
import { sameAnswersTogetherAndAlone, startTestApi } from '../support/api.js';
import { openTestDatabase, stopOwnCluster } from '../support/database.js';
import { testEngines } from '../support/engines.js';

// `GET /extended/v1/tx/:tx_id` reads the mined rows of requests that arrive together with one statement
// (`batchedMinedTxReads`, store/read/txs.ts), a fast path beside `findMinedTx`, and so the keys of the rows
// whose renderings it cached (`batchedMinedTxVersionReads` beside `findMinedTxVersion`): this proves both give
// the same row (or none) for every tx id of recorded chains (orphaned rows, microblock-streamed txs, contract
// calls with events, ids mined twice), anchored and unanchored, with several event pages asked in the same
// turn, and that the route's answers are the same bytes whether its requests arrive one at a time or all
// together, rendered or cached.

after(stopOwnCluster);

const FIXTURES = ['mainnet-reorg-scenario1', 'regtest-env-pox-4-stack-stx-in-reward-phase-S1'];

const PAGES: EventPage[] = [
  { offset: 0, limit: EVENT_LIMIT_DEFAULT },
  { offset: 0, limit: 1 },
  { offset: 1, limit: EVENT_LIMIT_DEFAULT },
  { offset: 2, limit: 3 },
];

const UNKNOWN = ['0x' + 'ab'.repeat(32), '0x' + '00'.repeat(32)];

/** The recorded chain's mined tx ids, and the ids only its mempool has. */
async function txIdsOf(store: Store): Promise<{ ids: string[]; mempoolOnly: string[] }> {
  const ids = (await store.sql<{ tx_id: string }[]>`SELECT DISTINCT tx_id FROM txs ORDER BY tx_id`).map(
    (r) => r.tx_id,
  );
  const mempoolOnly = (
    await store.sql<{ tx_id: string }[]>`
      SELECT tx_id FROM mempool_txs WHERE tx_id NOT IN (SELECT tx_id FROM txs) ORDER BY tx_id`
  ).map((r) => r.tx_id);
  return { ids, mempoolOnly };
}

for (const engine of testEngines(import.meta.url)) {
  for (const fixture of FIXTURES) {
    describe(`tx reads batched per turn (${fixture}, ${engine})`, () => {
      test('give the rows findMinedTx gives, for every tx id, page and visibility, in one statement per batch', async () => {
        const api = await startTestApi({ engine, fixture });
        try {
          const { store } = api;
          const { ids, mempoolOnly } = await txIdsOf(store);
          assert.ok(ids.length >= 20, `${fixture} has mined txs (${ids.length})`);
          const asked = [...ids, ...mempoolOnly, ...UNKNOWN];
          let batches = 0;
          const read = batchedMinedTxReads(() => {
            batches += 1;
            return store.sql;
          });
          let found = 0;
          let withEvents = 0;
          for (const unanchored of [false, true]) {
            // every id with every page in one turn, each id twice: one batch (one statement) per page
            batches = 0;
            const reads = PAGES.flatMap((page) =>
              [...asked, ...asked].map((txId) => ({ txId, page, row: read(txId, { unanchored }, page) })),
            );
            const rows = await Promise.all(reads.map((r) => r.row));
            assert.equal(batches, PAGES.length, 'one statement per page');
            for (const [i, { txId, page }] of reads.entries()) {
              const alone = await findMinedTx(store.sql, txId, { unanchored }, page);
              assert.deepEqual(rows[i], alone, `${txId} ${JSON.stringify(page)} unanchored=${unanchored}`);
              if (alone) found += 1;
              if (alone && alone.events.length > 0) withEvents += 1;
            }
            // a read alone in its turn
            batches = 0;
            const [first] = ids;
            assert.deepEqual(
              await read(first, { unanchored }, PAGES[0]),
              await findMinedTx(store.sql, first, { unanchored }, PAGES[0]),
            );
            assert.equal(batches, 1);
          }
          // the comparison covered found rows with events, and ids found nowhere
          assert.ok(found > ids.length, `rows found (${found})`);
          assert.ok(withEvents > 0, `rows with events (${withEvents})`);
        } finally {
          await api.close();
        }
      });

      test('key reads give what findMinedTxVersion gives, for every tx id and visibility, in one statement per batch', async () => {
        const api = await startTestApi({ engine, fixture });
        try {
          const { store } = api;
          const { ids, mempoolOnly } = await txIdsOf(store);
          const asked = [...ids, ...mempoolOnly, ...UNKNOWN];
          let batches = 0;
          const read = batchedMinedTxVersionReads(() => {
            batches += 1;
            return store.sql;
          });
          // every id twice with each visibility, all in one turn: one batch (one statement) per visibility
          const reads = [false, true].flatMap((unanchored) =>
            [...asked, ...asked].map((txId) => ({ txId, unanchored, version: read(txId, { unanchored }) })),
          );
          const versions = await Promise.all(reads.map((r) => r.version));
          assert.equal(batches, 2, 'one statement per visibility');
          let found = 0;
          let notFound = 0;
          for (const [i, { txId, unanchored }] of reads.entries()) {
            const alone = await findMinedTxVersion(store.sql, txId, { unanchored });
            assert.deepEqual(versions[i], alone, `${txId} unanchored=${unanchored}`);
            if (alone) found += 1;
            else notFound += 1;
          }
          // found keys (of the ids mined, each id asked 4 times) and ids found nowhere were compared
          assert.ok(found >= ids.length * 3, `versions found (${found} of ${reads.length})`);
          assert.ok(notFound >= UNKNOWN.length * 4, `versions not found (${notFound})`);
          // a read alone in its turn
          batches = 0;
          const [first] = ids;
          assert.deepEqual(
            await read(first, { unanchored: false }),
            await findMinedTxVersion(store.sql, first, { unanchored: false }),
          );
          assert.equal(batches, 1);
        } finally {
          await api.close();
        }
      });

      test('the route answers the same bytes to requests arriving together as to requests one at a time', async () => {
        let ids: string[] = [];
        const statuses = await sameAnswersTogetherAndAlone({ engine, fixture }, async (store) => {
          ids = (await store.sql<{ tx_id: string }[]>`SELECT DISTINCT tx_id FROM txs ORDER BY tx_id`).map(
            (r) => r.tx_id,
          );
          return [...ids, ...UNKNOWN].flatMap((id) => [
            `/extended/v1/tx/${id}`,
            `/extended/v1/tx/${id}?unanchored=true`,
            `/extended/v1/tx/${id}?event_offset=1&event_limit=2`,
          ]);
        });
        const ok = statuses.filter((status) => status === 200).length;
        assert.ok(ok >= ids.length, `answers found (${ok})`);
      });

      test('the route answers the same bytes to requests arriving together as one at a time, from cached renderings', async () => {
        let ids: string[] = [];
        let cachedAndUsed = 0;
        const statuses = await sameAnswersTogetherAndAlone(
          { engine, fixture, warm: true },
          async (store) => {
            ids = (await store.sql<{ tx_id: string }[]>`SELECT DISTINCT tx_id FROM txs ORDER BY tx_id`).map(
              (r) => r.tx_id,
            );
            return [...ids, ...UNKNOWN].flatMap((id) => [
              `/extended/v1/tx/${id}`,
              `/extended/v1/tx/${id}?unanchored=true`,
            ]);
          },
          (store) => {
            // the route sets a cached rendering's ETag when it sends it, after its key read found the same row
            const cache = txByIdRenderings(store);
            cachedAndUsed = ids.filter((id) => cache.get(id)?.etag !== undefined).length;
          },
        );
        const ok = statuses.filter((status) => status === 200).length;
        assert.ok(ok >= ids.length, `answers found (${ok})`);
        // the canonical anchored txs of the chain were sent from their cached renderings
        assert.ok(
          cachedAndUsed >= ids.length / 2,
          `cached renderings sent (${cachedAndUsed} of ${ids.length})`,
        );
      });
    });
  }

  test(`a failed batch statement fails every read of the batch (${engine})`, async () => {
    const db = await openTestDatabase(engine);
    await db.close();
    const read = batchedMinedTxReads(() => db.sql as Sql);
    const page = PAGES[0];
    const results = await Promise.allSettled(UNKNOWN.map((txId) => read(txId, { unanchored: false }, page)));
    assert.deepEqual(
      results.map((r) => r.status),
      ['rejected', 'rejected'],
    );
    const readVersion = batchedMinedTxVersionReads(() => db.sql as Sql);
    const versions = await Promise.allSettled(
      UNKNOWN.map((txId) => readVersion(txId, { unanchored: false })),
    );
    assert.deepEqual(
      versions.map((r) => r.status),
      ['rejected', 'rejected'],
    );
  });
}
