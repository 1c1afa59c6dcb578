import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Sql } from '../../src/store/db.js';
import { EventKind } from '../../src/store/schema/codes.js';
import { accountTxRows, batchedAccountTxReads, readAccountTx } from '../../src/store/read/account-txs.js';
import { batchedMinedTxReadsByKey, findMinedTxByKey, type MinedTxRowKey } from '../../src/store/read/txs.js';
import { sameAnswersTogetherAndAlone, startTestApi, type TestApi } from '../support/api.js';
import { openTestDatabase, stopOwnCluster } from '../support/database.js';
import { testEngines } from '../support/engines.js';

// `GET /extended/v1/address/:principal/:tx_id/with_transfers` reads the first statement of requests that
// arrive together with one statement (`batchedAccountTxReads`, store/read/account-txs.ts), a fast path beside
// `accountTxRows`, and so the mined rows it then reads (`batchedMinedTxReadsByKey`, store/read/txs.ts, beside
// `findMinedTxByKey`): this proves both give the same rows, in the same order, for every
// (principal, tx) pair and every row key of recorded chains (orphaned rows, microblock-streamed txs, FT and NFT
// transfers, txs of many events), for pairs and keys that do not exist, and that the route's answers are the
// same bytes whether its requests arrive one at a time or all together, rendered or cached.

after(stopOwnCluster);

// [fixture, how many of its canonical (principal, tx) pairs have several transfers (read from the tx's own
// events)]: the reorg chain has orphaned and microblock rows, the generated one FT and NFT transfers, mocknet
// pairs of two transfers, whose order the comparison then checks
const FIXTURES = [
  ['mainnet-reorg-scenario1', 0],
  ['generated/gen-small', 0],
  ['mocknet', 3],
] as const;

const UNKNOWN_TX = '0x' + 'ab'.repeat(32);
const UNKNOWN_PRINCIPAL = 'SP000000000000000000002Q6VF78.no-such-contract';

interface Pair {
  principal: string;
  txId: string;
}

/** Rows of a batch without the `ord` they carry (which pair of the batch they answer). */
const withoutOrd = (rows: readonly object[]) =>
  rows.map((row) => {
    const { ord, ...rest } = row as { ord?: unknown };
    assert.ok(Number(ord) >= 1, `a batch row says which pair it answers (${String(ord)})`);
    return rest;
  });

/** Every (principal, tx) pair of the principal index (at most `limit`), and pairs that match nothing. */
async function pairsOf(sql: Sql, limit: number): Promise<Pair[]> {
  const rows = await sql<{ principal: string; tx_id: string }[]>`
    SELECT DISTINCT principal, tx_id FROM principal_txs ORDER BY principal, tx_id LIMIT ${limit}`;
  // and the pairs of several transfers (the order of a pair's rows)
  const several = await sql<{ principal: string; tx_id: string }[]>`
    SELECT p.principal, p.tx_id FROM principal_txs p
    JOIN events e ON e.tx_id = p.tx_id AND e.index_block_hash = p.index_block_hash
      AND e.microblock_hash = p.microblock_hash AND (e.sender = p.principal OR e.recipient = p.principal)
      AND e.kind IN (${EventKind.stxAsset}, ${EventKind.ftAsset}, ${EventKind.nftAsset})
    WHERE p.canonical AND p.microblock_canonical
    GROUP BY p.principal, p.tx_id, p.index_block_hash, p.microblock_hash HAVING count(*) > 1
    ORDER BY p.principal, p.tx_id LIMIT ${limit}`;
  const pairs = [...new Map([...rows, ...several].map((r) => [`${r.principal}|${r.tx_id}`, r])).values()].map(
    (r) => ({ principal: r.principal, txId: r.tx_id }),
  );
  const [first] = pairs;
  const otherTx = rows.find((r) => r.principal !== first.principal)!.tx_id;
  return [
    ...pairs,
    { principal: first.principal, txId: UNKNOWN_TX },
    { principal: UNKNOWN_PRINCIPAL, txId: first.txId },
    // a tx of the chain the principal may take no part in
    { principal: first.principal, txId: otherTx },
  ];
}

for (const engine of testEngines(import.meta.url)) {
  for (const [fixture, severalTransfers] of FIXTURES) {
    describe(`account tx reads batched per turn (${fixture}, ${engine})`, () => {
      // The store reads below only read: one ingest of the fixture serves them all.
      let api: TestApi;
      before(async () => {
        api = await startTestApi({ engine, fixture });
      });
      after(() => api?.close());

      test('give the rows accountTxRows gives, for every (principal, tx) pair, in one statement per batch', async () => {
        const { store } = api;
        const pairs = await pairsOf(store.sql, 1500);
        assert.ok(pairs.length >= 50, `${fixture} has principal index rows (${pairs.length})`);
        let batches = 0;
        const read = batchedAccountTxReads(() => {
          batches += 1;
          return store.sql;
        });
        // every pair asked twice in one turn: one batch, one statement
        const asked = [...pairs, ...pairs];
        const together = await Promise.all(asked.map((p) => read(p.principal, p.txId)));
        assert.equal(batches, 1, 'one statement for the batch');
        let found = 0;
        let notFound = 0;
        let transfers = 0;
        let multiTransfer = 0;
        for (const [i, { principal, txId }] of asked.entries()) {
          const alone = [...(await accountTxRows(store.sql, principal, txId))];
          assert.deepEqual(withoutOrd(together[i]), alone, `${principal} in ${txId}`);
          if (alone.length === 0) notFound += 1;
          else found += 1;
          const withTransfer = alone.filter((r) => r.event_index !== null).length;
          transfers += withTransfer;
          if (withTransfer > 1) multiTransfer += 1;
        }
        // the comparison covered found pairs, pairs with several transfers (their order), and pairs found nowhere
        assert.ok(found > pairs.length, `pairs found (${found})`);
        assert.ok(notFound >= 4, `pairs not found (${notFound})`);
        assert.ok(transfers > 10, `transfers compared (${transfers})`);
        assert.equal(multiTransfer, severalTransfers * 2, 'pairs with several transfers (each asked twice)');
        // a read alone in its turn
        batches = 0;
        const [first] = pairs;
        assert.deepEqual(
          [...(await read(first.principal, first.txId))],
          [...(await accountTxRows(store.sql, first.principal, first.txId))],
        );
        assert.equal(batches, 1);
      });

      test('read with the mined row: the same rows plus the record findMinedTxByKey gives, batched and alone', async () => {
        const { store } = api;
        const pairs = await pairsOf(store.sql, 1500);
        let batches = 0;
        const read = batchedAccountTxReads(() => {
          batches += 1;
          return store.sql;
        });
        // asked with and without the row in one turn: one statement each
        const [withRows, withoutRows] = await Promise.all([
          Promise.all(pairs.map((p) => read(p.principal, p.txId, true))),
          Promise.all(pairs.map((p) => read(p.principal, p.txId))),
        ]);
        assert.equal(batches, 2, 'one statement per kind of read');
        let found = 0;
        let withAbi = 0;
        for (const [i, { principal, txId }] of pairs.entries()) {
          const alone = [...(await accountTxRows(store.sql, principal, txId, true))];
          assert.deepEqual(withoutOrd(withRows[i]), alone, `${principal} in ${txId}`);
          // the columns of the read without the row: the same values (key, event count, transfers)
          const without = await accountTxRows(store.sql, principal, txId);
          assert.deepEqual(withoutOrd(withoutRows[i]), [...without]);
          assert.equal(alone.length, without.length);
          for (const [j, row] of without.entries()) {
            const asRead = alone[j] as Record<string, unknown>;
            assert.deepEqual(
              Object.fromEntries(Object.keys(row).map((column) => [column, asRead[column]])),
              { ...row },
              `${principal} in ${txId}, row ${j}`,
            );
          }
          // the whole answer: the mined record from the first statement, as findMinedTxByKey reads it
          const parts = await readAccountTx(store.sql, principal, txId, undefined, { rowWithKey: true });
          assert.deepEqual(parts, await readAccountTx(store.sql, principal, txId));
          if (parts) {
            found += 1;
            assert.deepEqual(parts.tx, await findMinedTxByKey(store.sql, parts.key, null));
            if (parts.tx?.function_abi) withAbi += 1;
          }
        }
        assert.ok(found >= pairs.length / 2, `pairs found (${found} of ${pairs.length})`);
        if (fixture === 'generated/gen-small') assert.ok(withAbi > 0, `rows with an ABI (${withAbi})`);
      });

      test('mined rows by key give what findMinedTxByKey gives, for every row key, in one statement per batch', async () => {
        const { store } = api;
        const keys = await store.sql<MinedTxRowKey[]>`
          SELECT DISTINCT tx_id, index_block_hash, microblock_hash FROM principal_txs
          ORDER BY tx_id, index_block_hash, microblock_hash LIMIT 1500`;
        assert.ok(keys.length >= 20, `${fixture} has principal index rows (${keys.length})`);
        const [first] = keys;
        const asked: MinedTxRowKey[] = [
          ...keys,
          ...keys,
          {
            tx_id: UNKNOWN_TX,
            index_block_hash: first.index_block_hash,
            microblock_hash: first.microblock_hash,
          },
          { ...first, index_block_hash: '0x' + '00'.repeat(32) },
          { ...first, microblock_hash: '0x' + '11'.repeat(32) },
        ];
        let batches = 0;
        const read = batchedMinedTxReadsByKey(() => {
          batches += 1;
          return store.sql;
        });
        // every key asked twice in one turn: one batch, one statement
        const together = await Promise.all(asked.map((k) => read(k)));
        assert.equal(batches, 1, 'one statement for the batch');
        let found = 0;
        let withAbi = 0;
        for (const [i, key] of asked.entries()) {
          const alone = await findMinedTxByKey(store.sql, key, null);
          assert.deepEqual(together[i], alone, JSON.stringify(key));
          if (alone) found += 1;
          if (alone?.function_abi) withAbi += 1;
        }
        // rows of every key of the index (each asked twice), contract calls' ABIs, and 3 keys found nowhere
        assert.equal(found, keys.length * 2, 'rows found');
        assert.equal(asked.length - found, 3, 'keys not found');
        // the generated chain calls the contracts it deploys: their ABIs were compared too
        if (fixture === 'generated/gen-small') assert.ok(withAbi > 0, `rows with an ABI (${withAbi})`);
        // a read alone in its turn
        batches = 0;
        assert.deepEqual(await read(first), await findMinedTxByKey(store.sql, first, null));
        assert.equal(batches, 1);
      });

      for (const warm of [false, true]) {
        test(`the route answers the same bytes to requests arriving together as to requests one at a time${warm ? ', from cached renderings' : ''}`, async () => {
          let pairs: Pair[] = [];
          let expectedFound = 0;
          const statuses = await sameAnswersTogetherAndAlone({ engine, fixture, warm }, async (store) => {
            pairs = await pairsOf(store.sql, 300);
            for (const { principal, txId } of pairs) {
              if ((await accountTxRows(store.sql, principal, txId)).length > 0) expectedFound += 1;
            }
            return pairs.map(
              ({ principal, txId }) => `/extended/v1/address/${principal}/${txId}/with_transfers`,
            );
          });
          const ok = statuses.filter((status) => status === 200).length;
          const missing = statuses.filter((status) => status === 404).length;
          assert.equal(ok, expectedFound, 'answers found: the pairs the principal takes part in');
          assert.ok(ok >= pairs.length / 2, `answers found (${ok} of ${pairs.length})`);
          assert.ok(missing >= 2, `answers not found (${missing})`);
        });
      }
    });
  }

  test(`a failed batch statement fails every read of the batch (${engine})`, async () => {
    const db = await openTestDatabase(engine);
    await db.close();
    const read = batchedAccountTxReads(() => db.sql as Sql);
    const results = await Promise.allSettled([
      read(UNKNOWN_PRINCIPAL, UNKNOWN_TX),
      read(UNKNOWN_PRINCIPAL, '0x' + '00'.repeat(32)),
    ]);
    assert.deepEqual(
      results.map((r) => r.status),
      ['rejected', 'rejected'],
    );
    const readRow = batchedMinedTxReadsByKey(() => db.sql as Sql);
    const rows = await Promise.allSettled(
      [UNKNOWN_TX, '0x' + '00'.repeat(32)].map((txId) =>
        readRow({ tx_id: txId, index_block_hash: '0x' + '00'.repeat(32), microblock_hash: '' }),
      ),
    );
    assert.deepEqual(
      rows.map((r) => r.status),
      ['rejected', 'rejected'],
    );
  });
}
