import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { Ingestor } from '../../src/ingest/ingestor.js';
import { migrate } from '../../src/store/migrate.js';
import { Store } from '../../src/store/store.js';
import { insertMinerRewards } from '../../src/store/write/blocks.js';
import { openTestDatabase, silentLogger, stopOwnCluster } from '../support/database.js';
import { READ_TABLES, RECEIPT_TIME_COLUMNS, databaseDigest } from '../support/digest.js';
import { largeBlock } from '../support/large-block.js';
import { generatedFixtureFile } from '../support/shared.js';

// Bulk inserts go in statements of at most 250 rows (store/write/bulk.ts), each sent once the previous one
// is done, in the message's transaction. Cutting must change nothing: the same rows, and the same principal
// ordinals (numbered per statement after the counts the previous statements raised). And a statement left to
// send once the transaction's work has ended must not run outside it: it is refused, and nothing is written.

after(stopOwnCluster);

async function openStore(rowsPerStatement: number): Promise<Store> {
  const db = await openTestDatabase('postgres');
  await migrate(db.sql);
  return new Store(db, { rowsPerStatement });
}

type MinerReward = Parameters<typeof insertMinerRewards>[1][number];

function rewards(count: number): MinerReward[] {
  return Array.from({ length: count }, (_, i) => ({
    index_block_hash: `0x${String(i).padStart(64, '0')}`,
    mature_block_height: i,
    from_index_consensus_hash: '0x00',
    from_stacks_block_hash: '0x00',
    recipient: 'SP000000000000000000002Q6VF78',
    miner_address: null,
    coinbase_amount: '1000',
    tx_fees_anchored: '0',
    tx_fees_streamed_confirmed: '0',
    tx_fees_streamed_produced: '0',
    canonical: true,
  }));
}

describe('bulk inserts in statements of bounded size (postgres)', () => {
  test('a 2,954-tx block cut into 250-row statements gives the tables one statement per table gives', async () => {
    const { first, large, txs } = await largeBlock(generatedFixtureFile('gen-small'));
    const receivedAt = new Date('2026-01-01T00:00:00Z');
    const digests: Record<string, string>[] = [];
    const counts: Record<string, number>[] = [];
    for (const rowsPerStatement of [250, 1_000_000]) {
      const store = await openStore(rowsPerStatement);
      try {
        const ingestor = new Ingestor(store, { isMainnet: false, logger: silentLogger });
        assert.equal(await ingestor.apply('/new_block', first, receivedAt), 'applied');
        assert.equal(await ingestor.apply('/new_block', large, receivedAt), 'applied');
        await ingestor.settled();
        digests.push(await databaseDigest(store.sql, READ_TABLES, RECEIPT_TIME_COLUMNS));
        const [row] = await store.sql<
          { txs: number; events: number; principal_txs: number; max_ordinal: number }[]
        >`
          SELECT (SELECT count(*)::int FROM txs) AS txs, (SELECT count(*)::int FROM events) AS events,
            (SELECT count(*)::int FROM principal_txs) AS principal_txs,
            (SELECT max(ordinal)::int FROM principal_txs) AS max_ordinal`;
        counts.push(row);
      } finally {
        await store.close();
      }
    }
    // the large block's rows span many statements of 250 (one principal's rows across several of them)
    // (gen-small: 2,954 txs, 3,798 events, 6,756 principal rows, a principal numbered up to 916)
    assert.ok(txs > 2_500, `${txs} txs`);
    assert.equal(counts[0].txs, txs + 2, 'the large block, the first block and the genesis block');
    assert.ok(counts[0].events > 2_500, `${counts[0].events} events`);
    assert.ok(counts[0].principal_txs > 6_000, `${counts[0].principal_txs} principal rows`);
    assert.ok(counts[0].max_ordinal > 500, `highest ordinal ${counts[0].max_ordinal}`);
    assert.deepEqual(counts[1], counts[0]);
    assert.deepEqual(digests[1], digests[0]);
  });

  test('statements left to send when the transaction ends are refused: nothing half-written', async () => {
    const store = await openStore(2);
    try {
      const count = async () =>
        (await store.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM miner_rewards`)[0].n;

      // The work throws while an insert of 5 rows (3 statements of 2) is being sent: the insert's later
      // statements are refused, the transaction rolls back.
      let insert: Promise<unknown> | undefined;
      await assert.rejects(
        store.transaction(async (sql) => {
          insert = insertMinerRewards(sql, rewards(5));
          insert.catch(() => {});
          throw new Error('the work failed');
        }),
        /the work failed/,
      );
      await assert.rejects(insert!, /the transaction ended with 3 rows of an insert not sent/);
      assert.equal(await count(), 0);

      // The work returns without waiting for its insert: the first statement was sent inside the
      // transaction, but the rest cannot be; the transaction is rolled back instead of committing 2 of 5 rows.
      await assert.rejects(
        store.transaction(async (sql) => {
          insert = insertMinerRewards(sql, rewards(5));
          insert.catch(() => {});
        }),
        /the transaction's work returned with 1 bulk insert\(s\) unfinished/,
      );
      await assert.rejects(insert!, /the transaction ended with 3 rows of an insert not sent/);
      assert.equal(await count(), 0);

      // Awaited, the same insert writes its 5 rows in 3 statements.
      await store.transaction((sql) => insertMinerRewards(sql, rewards(5)));
      assert.equal(await count(), 5);
    } finally {
      await store.close();
    }
  });
});
