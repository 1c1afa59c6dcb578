import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Ingestor } from '../../src/ingest/ingestor.js';
import type { Engine } from '../../src/store/db.js';
import { migrate } from '../../src/store/migrate.js';
import { Store } from '../../src/store/store.js';
import { insertChainRows, insertMinerRewards } from '../../src/store/write/blocks.js';
import { inStatementsOfBoundedSize } from '../../src/store/write/bulk.js';
import { openTestDatabase, silentLogger, stopOwnCluster } from '../support/database.js';
import { READ_TABLES, RECEIPT_TIME_COLUMNS, databaseDigest } from '../support/digest.js';
import { largeBlock } from '../support/large-block.js';
import { generatedFixtureFile } from '../support/shared.js';

// Bulk inserts go in statements of at most 250 rows (store/write/bulk.ts), each sent once the previous one
// is done, in the message's transaction, on both engines (sent pipelined, 4 in flight, they were no faster on
// PostgreSQL: bench finding F-ingest-pipelined-inserts). Cutting must change nothing: the same rows, and
// the same principal ordinals (numbered per statement after the counts the previous statements raised). A
// statement left to send once the transaction's work has ended must not run outside it: it is refused, and
// nothing is written. A statement failing in the middle of an insert fails the whole message.

after(stopOwnCluster);

async function openStore(rowsPerStatement: number, engine: Engine = 'postgres'): Promise<Store> {
  const db = await openTestDatabase(engine);
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
        assert.equal(await ingestor.take('/new_block', first, receivedAt), 'applied');
        assert.equal(await ingestor.take('/new_block', large, receivedAt), 'applied');
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

  test('text and json elements of the array literals are stored as given (quotes, backslashes, escapes, non-ASCII)', async () => {
    // a contract's ABI is the node's JSON, stored as jsonb through a text element of an array literal; its
    // tx id is a text element. NUL is dropped from both, as the original API does.
    const tricky =
      'say "hi" \\ C:\\dir\\ \\n is not \n; tab\t \u0001 é 日本 😀 \u2028\u2029 "\\"" {a,b} NULL';
    const abi = { tricky, nested: [{ [tricky]: [tricky, 1, null, true] }], nul: 'a\u0000b' };
    const store = await openStore(250);
    try {
      await store.transaction((sql) =>
        insertChainRows(sql, {
          txs: [],
          events: [],
          principalTxs: [],
          smartContracts: [
            {
              contract_id: 'SP000000000000000000002Q6VF78.tricky',
              tx_id: tricky + '\u0000!',
              index_block_hash: '0x01',
              microblock_hash: '',
              block_height: 1,
              clarity_version: null,
              abi,
              canonical: true,
              microblock_canonical: true,
            },
          ],
        }),
      );
      const rows = await store.sql<{ tx_id: string; abi: unknown; tricky: string }[]>`
        SELECT tx_id, abi, abi->>'tricky' AS tricky FROM smart_contracts`;
      assert.equal(rows.length, 1);
      assert.equal(rows[0].tx_id, tricky + '!');
      assert.equal(rows[0].tricky, tricky);
      assert.deepEqual(rows[0].abi, { ...abi, nul: 'ab' });
    } finally {
      await store.close();
    }
  });
});

for (const engine of ['postgres', 'pglite'] as const) {
  describe(`an insert's statements, sent and refused (${engine})`, () => {
    // one migrated database for the three tests (migrating PGlite takes seconds); each leaves it as it found it
    let store: Store;
    before(async () => {
      store = await openStore(2, engine);
    });
    after(() => store.close());
    const count = async () =>
      (await store.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM miner_rewards`)[0].n;

    test("an insert's statements are sent one at a time, each once the previous one has answered", async () => {
      // 10 values in 5 statements of 2, each a real statement answering its own values
      const values = Array.from({ length: 10 }, (_, i) => i);
      let sent = 0;
      let answered = 0;
      let mostInFlight = 0;
      let sentWhenFirstAnswered = 0;
      const answers: number[][] = [];
      await store.transaction((sql) =>
        inStatementsOfBoundedSize(sql, values, (chunk) => {
          sent++;
          mostInFlight = Math.max(mostInFlight, sent - answered);
          return sql<{ n: number }[]>`SELECT unnest(${sql.array([...chunk], 23)}::int4[]) AS n`.then(
            (rows) => {
              if (answered++ === 0) sentWhenFirstAnswered = sent;
              answers.push(rows.map((r) => r.n));
            },
          );
        }),
      );
      assert.equal(sent, 5);
      assert.equal(sentWhenFirstAnswered, 1);
      assert.equal(mostInFlight, 1);
      assert.deepEqual(answers, [
        [0, 1],
        [2, 3],
        [4, 5],
        [6, 7],
        [8, 9],
      ]);
    });

    test('statements left to send when the transaction ends are refused: nothing half-written', async () => {
      // statements of 2 rows: the first sent at once, then 5 rows (3 statements) left to send
      const rowCount = 7;

      // The work throws while the insert is being sent: its later statements are refused, the transaction
      // rolls back.
      let insert: Promise<unknown> | undefined;
      await assert.rejects(
        store.transaction(async (sql) => {
          insert = insertMinerRewards(sql, rewards(rowCount));
          insert.catch(() => {});
          throw new Error('the work failed');
        }),
        /the work failed/,
      );
      await assert.rejects(insert!, /the transaction ended with 5 rows of an insert not sent/);
      assert.equal(await count(), 0);

      // The work returns without waiting for its insert: the first statement was sent inside the
      // transaction, but the rest cannot be; the transaction is rolled back instead of committing part.
      await assert.rejects(
        store.transaction(async (sql) => {
          insert = insertMinerRewards(sql, rewards(rowCount));
          insert.catch(() => {});
        }),
        /the transaction's work returned with 1 bulk insert\(s\) unfinished/,
      );
      await assert.rejects(insert!, /the transaction ended with 5 rows of an insert not sent/);
      assert.equal(await count(), 0);

      // Awaited, the same insert writes its rows.
      await store.transaction((sql) => insertMinerRewards(sql, rewards(rowCount)));
      assert.equal(await count(), rowCount);
      await store.sql`DELETE FROM miner_rewards`;
    });

    test('a statement failing in the middle of an insert rolls the whole message back', async () => {
      // 7 rows in 4 statements of 2; the second statement's first row is out of int4's range
      const rows = rewards(7);
      rows[2] = { ...rows[2], mature_block_height: 2 ** 31 };
      let sent = 0;
      let sentWhenFirstAnswered = 0;
      await assert.rejects(
        store.transaction(async (sql) => {
          // written first in the same transaction: must not survive the failure either
          await insertMinerRewards(sql, [{ ...rewards(1)[0], index_block_hash: `0x${'f'.repeat(64)}` }]);
          await inStatementsOfBoundedSize(sql, rows, (chunk) => {
            sent++;
            const statement = insertMinerRewards(sql, [...chunk]);
            statement.then(
              () => (sentWhenFirstAnswered ||= sent),
              () => (sentWhenFirstAnswered ||= sent),
            );
            return statement;
          });
        }),
        /out of range for type integer/,
      );
      assert.equal(await count(), 0);
      // none was sent after the failing one
      assert.equal(sentWhenFirstAnswered, 1);
      assert.equal(sent, 2);
    });
  });
}
