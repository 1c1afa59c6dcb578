import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { RecordedMessage } from '../../src/protocol/tsv.js';
import type { Engine, Sql, TransactionSql } from '../../src/store/db.js';
import {
  accountTxRows,
  batchedAccountTxReads,
  listAccountTxs,
  listAccountTxsAtHeight,
} from '../../src/store/read/account-txs.js';
import { idsToTry } from '../../src/store/read/demo.js';
import type { PrincipalTxRow } from '../../src/store/schema/rows.js';
import type { Store } from '../../src/store/store.js';
import { insertChainRows, setBlocksCanonical } from '../../src/store/write/blocks.js';
import { addBlockContributions, removeBlockContributions } from '../../src/store/write/contributions.js';
import { adoptGenesisRows } from '../../src/store/write/genesis.js';
import { dropStagedRows, orphanMicroblocks } from '../../src/store/write/microblocks.js';
import { databaseDigest } from '../support/digest.js';
import { openTestStore, stopOwnCluster } from '../support/database.js';
import { generatedMessages, ingestMessages } from '../support/delivery.js';
import { assertMigrationEquivalent } from '../support/migrations.js';
import { testEngines } from '../support/engines.js';

// Migration 028 took the principal index's 4-text primary key away (its widest index, in the largest share of
// ingest's statement time) for a non-unique index on (tx_id, principal). Two things to prove: a database
// indexed before the migration (on the schema of 001-027; by this code, whose statements run on both) ends
// equal to one indexed after it, and every statement that touches the table still finds its rows by an index
// on a table grown past the size where a scan is as cheap (no sequential scan of it at all).

const CHAIN = { blocks: 40, accounts: 12, seed: 'principal-index', txsPerBlock: 10, workers: 0 };
let messages: RecordedMessage[];
const dir = mkdtempSync(join(tmpdir(), 'principal-index-'));

before(async () => {
  ({ messages } = await generatedMessages(CHAIN));
});

after(async () => {
  rmSync(dir, { recursive: true, force: true });
  await stopOwnCluster();
});

const ingestAll = (store: Store) => ingestMessages(store, messages);

const principalIndexes = (sql: Sql) => sql<{ indexname: string; indexdef: string }[]>`
  SELECT indexname, indexdef FROM pg_indexes WHERE tablename = 'principal_txs' ORDER BY indexname`;

for (const engine of testEngines(import.meta.url) as Engine[]) {
  describe(`migration 028, the principal index without its primary key (${engine})`, () => {
    test('a database indexed before it ends equal to one indexed after it', async () => {
      await assertMigrationEquivalent({
        engine,
        version: 28,
        dir,
        messages,
        beforeMigration: async (old) => {
          assert.deepEqual(
            (await principalIndexes(old)).map((i) => i.indexname),
            [
              'principal_txs_block_idx',
              'principal_txs_ordinal_idx',
              'principal_txs_pkey',
              'principal_txs_principal_height_idx',
            ],
          );
        },
        migrated: async (old, fresh) => {
          const [{ rows }] = await fresh<{ rows: number }[]>`SELECT count(*)::int AS rows FROM principal_txs`;
          assert.ok(rows > 400, `${rows} principal index rows`);
          assert.deepEqual(await principalIndexes(old), await principalIndexes(fresh));
          assert.deepEqual(
            (await principalIndexes(fresh)).map((i) => i.indexname),
            [
              'principal_txs_block_idx',
              'principal_txs_ordinal_idx',
              'principal_txs_principal_height_idx',
              'principal_txs_tx_idx',
            ],
          );
        },
      });
    });
  });
}

describe('the statements on the principal index, on a grown table (postgres)', () => {
  test('find its rows by an index, never by a scan of the table, in their generic plans', async () => {
    const store = await openTestStore('postgres');
    try {
      await ingestAll(store);
      const sql = store.sql;
      // 200,000 rows more (on 40,000 principals and 100,000 txs, 500 blocks of 400 rows above the chain):
      // past the size where the planner rightly scans a small table
      await sql`
        INSERT INTO principal_txs (principal, tx_id, index_block_hash, microblock_hash, block_height,
          microblock_sequence, tx_index, canonical, microblock_canonical, ordinal)
        SELECT 'SP' || upper(md5('p' || (n % 40000))), '0x' || md5('t' || (n / 2)) || md5('u' || (n / 2)),
          '0x' || md5('b' || (n / 400)) || md5('c' || (n / 400)), '', 10000 + n / 400, 2147483647, n % 400,
          true, true, NULL
        FROM generate_series(0, 199999) AS n`;
      // and a tx with a row per genesis account, as the genesis tx of the bench chains (10,000 accounts)
      const wideTx = '0x' + 'ee'.repeat(32);
      await sql`
        INSERT INTO principal_txs (principal, tx_id, index_block_hash, microblock_hash, block_height,
          microblock_sequence, tx_index, canonical, microblock_canonical, ordinal)
        SELECT 'SP' || upper(md5('g' || n)), ${wideTx}, ${'0x' + 'ff'.repeat(32)}, '', 1, 2147483647, 0, true, true, NULL
        FROM generate_series(0, 9999) AS n`;
      await sql`VACUUM ANALYZE principal_txs`;
      // the tip block: orphaned and restored, its rows are numbered again as they were
      const [block] = await sql<{ index_block_hash: string; block_height: number }[]>`
        SELECT index_block_hash, block_height FROM blocks WHERE canonical ORDER BY block_height DESC LIMIT 1`;
      const [busy] = await sql<{ principal: string; tx_count: number }[]>`
        SELECT principal, tx_count::int FROM principal_stats ORDER BY tx_count DESC, principal LIMIT 1`;
      const [tip] = await sql<{ block_height: number }[]>`SELECT block_height FROM chain_tip`;
      const stored = await sql<PrincipalTxRow[]>`
        SELECT principal, tx_id, index_block_hash, microblock_hash, block_height, microblock_sequence, tx_index,
          canonical, microblock_canonical
        FROM principal_txs WHERE index_block_hash = ${block.index_block_hash}
        ORDER BY block_height, microblock_sequence, tx_index, principal`;
      assert.ok(stored.length >= 10, `${stored.length} rows in block ${block.block_height}`);
      const before = await databaseDigest(sql, ['principal_txs', 'principal_stats']);

      // PostgreSQL 15's transaction statistics also hold this backend's counts not yet flushed (the digest
      // above scanned the table): what the statements below add is counted from this baseline.
      const seqScans = (tx: TransactionSql) =>
        tx<
          { n: number }[]
        >`SELECT seq_scan::int AS n FROM pg_stat_xact_user_tables WHERE relname = 'principal_txs'`;
      let seqScansBefore = 0;
      const scans = await sql.begin(async (tx: TransactionSql) => {
        await tx`SET LOCAL plan_cache_mode = force_generic_plan`;
        [{ n: seqScansBefore }] = await seqScans(tx);
        const read = tx as unknown as Sql;
        // the reads: pages at the tip (anchored, unanchored) and at a past height, a height, one tx, many txs
        const page = await listAccountTxs(
          read,
          busy.principal,
          { tip: tip.block_height, height: tip.block_height },
          { limit: 5, offset: 3 },
        );
        assert.equal(page.total, busy.tx_count);
        assert.equal(page.keys.length, 5);
        await listAccountTxs(
          read,
          busy.principal,
          { tip: tip.block_height, height: tip.block_height + 1 },
          { limit: 5, offset: 0 },
        );
        const past = await listAccountTxs(
          read,
          busy.principal,
          { tip: tip.block_height, height: tip.block_height - 10 },
          { limit: 5, offset: 0 },
        );
        assert.ok(past.total < busy.tx_count && past.total > 0, `${past.total} of ${busy.tx_count}`);
        await listAccountTxsAtHeight(read, stored[0].principal, block.block_height);
        const one = await accountTxRows(read, stored[0].principal, stored[0].tx_id);
        assert.equal(one[0].tx_id, stored[0].tx_id);
        assert.equal(one[0].index_block_hash, block.index_block_hash);
        const together = batchedAccountTxReads(() => read);
        const both = await Promise.all([
          together(stored[0].principal, stored[0].tx_id),
          together(stored[1].principal, stored[1].tx_id),
        ]);
        assert.deepEqual(
          both.map((rows) => rows[0].tx_id),
          [stored[0].tx_id, stored[1].tx_id],
        );
        await idsToTry(read);

        // the writes: a block's stored rows sent again (numbered, and not), which insert nothing; a reorg's
        // flips and its ordinals released and assigned again; the staged rows of microblocks; block 0 adopted
        const rows = { txs: [], events: [], smartContracts: [], principalTxs: stored };
        await insertChainRows(tx, rows, { ordinals: true });
        await insertChainRows(tx, rows);
        await setBlocksCanonical(tx, [block.index_block_hash], false);
        await removeBlockContributions(tx, [block.index_block_hash]);
        await setBlocksCanonical(tx, [block.index_block_hash], true);
        await addBlockContributions(tx, [block.index_block_hash]);
        await orphanMicroblocks(tx, ['0x' + 'ab'.repeat(32)]);
        await dropStagedRows(tx, ['0x' + 'ab'.repeat(32)]);
        await adoptGenesisRows(tx, '0x' + 'cd'.repeat(32), {
          ...block,
          block_hash: '',
          burn_block_time: 0,
          burn_block_height: 0,
          parent_block_hash: '',
          parent_index_block_hash: '',
        });

        return tx<{ name: string; scans: number }[]>`
          SELECT 'seq_scan' AS name, seq_scan::int AS scans FROM pg_stat_xact_user_tables WHERE relname = 'principal_txs'
          UNION ALL
          SELECT indexrelname, pg_stat_get_xact_numscans(indexrelid)::int FROM pg_stat_user_indexes
          WHERE relname = 'principal_txs'
          ORDER BY name`;
      });
      const byName = Object.fromEntries(scans.map((s) => [s.name, s.scans]));
      assert.equal(byName.seq_scan - seqScansBefore, 0, JSON.stringify({ ...byName, seqScansBefore }));
      for (const index of [
        'principal_txs_block_idx',
        'principal_txs_ordinal_idx',
        'principal_txs_principal_height_idx',
        'principal_txs_tx_idx',
      ]) {
        assert.ok(byName[index] > 0, `${index}: ${JSON.stringify(byName)}`);
      }
      // one principal's row of the wide tx is found as one row, not among the tx's 10,000: by the read, and
      // by the probe of an insert of rows that may be stored (the row is stored: nothing is inserted)
      const fetchedBy = (fn: (tx: TransactionSql, principal: string) => Promise<unknown>) =>
        sql.begin(async (tx: TransactionSql) => {
          await tx`SET LOCAL plan_cache_mode = force_generic_plan`;
          const [row] = await tx<PrincipalTxRow[]>`
            SELECT principal, tx_id, index_block_hash, microblock_hash, block_height, microblock_sequence,
              tx_index, canonical, microblock_canonical
            FROM principal_txs WHERE principal = 'SP' || upper(md5('g' || 5000))`;
          const [{ fetched: before }] = await tx<{ fetched: number }[]>`
            SELECT idx_tup_fetch::int AS fetched FROM pg_stat_xact_user_tables WHERE relname = 'principal_txs'`;
          await fn(tx, row.principal);
          await insertChainRows(tx, { txs: [], events: [], smartContracts: [], principalTxs: [row] });
          const [{ fetched }] = await tx<{ fetched: number }[]>`
            SELECT idx_tup_fetch::int AS fetched FROM pg_stat_xact_user_tables WHERE relname = 'principal_txs'`;
          return fetched - before;
        });
      assert.equal(await fetchedBy(async () => {}), 1);
      assert.equal(
        await fetchedBy((tx, principal) => accountTxRows(tx as unknown as Sql, principal, wideTx)),
        2,
      );
      // the rows sent again inserted nothing; the block orphaned and restored is numbered as it was
      assert.deepEqual(await databaseDigest(sql, ['principal_txs', 'principal_stats']), before);
    } finally {
      await store.close();
    }
  });
});
