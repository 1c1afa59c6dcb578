import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { RecordedMessage } from '../../src/protocol/tsv.js';
import type { Engine, Sql, TransactionSql } from '../../src/store/db.js';
import { MempoolStatus } from '../../src/store/schema/codes.js';
import type { Store } from '../../src/store/store.js';
import { resolveSameNonce, RESOLVE_FROM_STORED } from '../../src/store/write/mempool.js';
import { openTestStore, stopOwnCluster } from '../support/database.js';
import { generatedMessages, ingestMessages } from '../support/delivery.js';
import { assertMigrationEquivalent } from '../support/migrations.js';
import { testEngines } from '../support/engines.js';

// Migration 029 put the chain position into the (sponsor, nonce) index of txs, so that resolving a pair from
// the stored txs (store/write/mempool.ts `RESOLVE_FROM_STORED`) reads the last tx of the pair mined as
// sponsored, instead of every one. Two things to prove: a database indexed before the migration ends
// equal to one indexed after it, and on a sponsor's pair grown to thousands of mined txs the statement
// reads a few rows of txs by those indexes and still picks the last mined one, as the ranking does.

const CHAIN = { blocks: 30, accounts: 12, seed: 'same-nonce-lookup', txsPerBlock: 10, workers: 0 };
let messages: RecordedMessage[];
const dir = mkdtempSync(join(tmpdir(), 'same-nonce-lookup-'));

before(async () => {
  ({ messages } = await generatedMessages(CHAIN));
});

after(async () => {
  rmSync(dir, { recursive: true, force: true });
  await stopOwnCluster();
});

const ingestAll = (store: Store) => ingestMessages(store, messages);

const nonceIndexes = (sql: Sql) => sql<{ indexname: string; indexdef: string }[]>`
  SELECT indexname, indexdef FROM pg_indexes WHERE tablename = 'txs' AND indexname LIKE '%nonce%'
  ORDER BY indexname`;

for (const engine of testEngines(import.meta.url) as Engine[]) {
  describe(`migration 029, the sponsored txs' nonce index in chain order (${engine})`, () => {
    test('a database indexed before it ends equal to one indexed after it', async () => {
      await assertMigrationEquivalent({
        engine,
        version: 29,
        dir,
        messages,
        migrated: async (old, fresh) => {
          const [{ sponsored, replaced }] = await fresh<{ sponsored: number; replaced: number }[]>`
            SELECT (SELECT count(*)::int FROM txs WHERE sponsored) AS sponsored,
              (SELECT count(*)::int FROM mempool_txs WHERE status = ${MempoolStatus.dropped_replace_by_fee})
                AS replaced`;
          assert.ok(sponsored > 5, `${sponsored} sponsored txs`);
          assert.ok(replaced > 5, `${replaced} txs replaced by fee`);
          assert.deepEqual(await nonceIndexes(old), await nonceIndexes(fresh));
          assert.deepEqual(
            (await nonceIndexes(fresh)).map((i) => i.indexdef.replace(/^.* USING btree /, '')),
            [
              '(sender_address, nonce)',
              '(sponsor_address, nonce, block_height, microblock_sequence, tx_index, tx_id DESC) WHERE sponsored',
              // migration 036's, for the nonces a sponsor used as sponsor
              '(sponsor_address, sponsor_nonce) WHERE sponsored',
            ],
          );
        },
      });
    });
  });
}

/** The [parent, child] pairs of an EXPLAIN (FORMAT JSON) plan's nodes, depth first. */
function planEdges(node: PlanNode): [PlanNode, PlanNode][] {
  return (node.Plans ?? []).flatMap((child) => [[node, child] as [PlanNode, PlanNode], ...planEdges(child)]);
}
interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  'Index Name'?: string;
  'Scan Direction'?: string;
  Plans?: PlanNode[];
}

const MINED = 3000;
const hash = (text: string) => `'0x' || md5(${text}) || md5('x' || ${text})`;

describe('resolving a sponsor pair of thousands of mined txs from the stored txs (postgres)', () => {
  test('reads its last mined tx by the nonce indexes, and it wins', async () => {
    const store = await openTestStore('postgres');
    try {
      await ingestAll(store);
      const sql = store.sql;
      // a sponsored tx mined on the chain, and its mempool row (a member of its sponsor's pair)
      const [claim] = await sql<
        {
          tx_id: string;
          sender_address: string;
          sponsor_address: string;
          nonce: number;
          block_height: number;
        }[]
      >`
        SELECT t.tx_id, t.sender_address, t.sponsor_address, t.nonce::int, t.block_height FROM txs t
        JOIN mempool_txs m USING (tx_id)
        WHERE t.sponsored AND t.canonical AND t.microblock_canonical ORDER BY t.block_height DESC, t.tx_id LIMIT 1`;
      assert.ok(claim, 'a mined sponsored tx the mempool saw');
      const [tip] = await sql<{ block_height: number }[]>`SELECT block_height FROM chain_tip`;
      // its sponsor's pair grown by copies of it, mined at heights above the tip in a shuffled order (so
      // insertion order is not chain order): the last in chain order is copy 1999 (the highest height, the
      // highest tx_index there). Beside it, at the same position, copy 1234 with a larger id (the ranking
      // breaks ties by id; the index scan alone meets copy 1234 first), and above both an orphaned copy
      // (skipped: not canonical).
      const top = 1999;
      const tie = 1234;
      const position = `
        CASE n WHEN ${top} THEN ${MINED + 10} WHEN ${tie} THEN ${MINED + 10} WHEN 2500 THEN ${MINED + 20}
          ELSE 1 + (n * 7919) % ${MINED} END`;
      await sql.unsafe(
        `INSERT INTO txs
         SELECT (jsonb_populate_record(t, jsonb_build_object(
           'tx_id', CASE n WHEN ${top} THEN '0x00' ELSE '0xff' END || substr(${hash("'tx' || n")}, 5),
           'index_block_hash', ${hash("'block' || n")},
           'block_height', $1::int + ${position},
           'tx_index', CASE n WHEN ${top} THEN 7 WHEN ${tie} THEN 7 ELSE n % 5 END,
           'sender_address', 'ST' || upper(md5('origin' || n)),
           'canonical', n <> 2500))).*
         FROM txs t, generate_series(1, ${MINED}) AS n
         WHERE t.tx_id = $2 AND t.canonical`,
        [tip.block_height, claim.tx_id],
      );
      await sql`VACUUM ANALYZE txs`;
      const [winner] = await sql<{ tx_id: string }[]>`
        SELECT tx_id FROM txs WHERE index_block_hash = ${sql.unsafe(hash(`'block' || ${top}`))}`;

      const resolved = await sql.begin(async (tx: TransactionSql) => {
        await tx`SET LOCAL plan_cache_mode = force_generic_plan`;
        const [{ fetched: before }] = await tx<{ fetched: number }[]>`
          SELECT idx_tup_fetch::int AS fetched FROM pg_stat_xact_user_tables WHERE relname = 'txs'`;
        await resolveSameNonce(tx, [
          {
            sender_address: claim.sender_address,
            sponsored: true,
            sponsor_address: claim.sponsor_address,
            nonce: claim.nonce,
          },
        ]);
        const [{ fetched }] = await tx<{ fetched: number }[]>`
          SELECT idx_tup_fetch::int AS fetched FROM pg_stat_xact_user_tables WHERE relname = 'txs'`;
        await tx.unsafe(`PREPARE resolve_stored(text[], int8[], int2) AS ${RESOLVE_FROM_STORED}`);
        const [row] = await tx.unsafe<{ 'QUERY PLAN': [{ Plan: PlanNode }] }[]>(
          `EXPLAIN (FORMAT JSON) EXECUTE resolve_stored(ARRAY['x'], ARRAY[0], 1)`,
        );
        await tx`DEALLOCATE resolve_stored`;
        return { fetched: fetched - before, plan: row['QUERY PLAN'][0].Plan };
      });
      const [member] = await sql<{ status: number; replaced_by_tx_id: string | null }[]>`
        SELECT status, replaced_by_tx_id FROM mempool_txs WHERE tx_id = ${claim.tx_id}`;
      // the mined tx the mempool saw is now replaced by the pair's last mined tx
      assert.deepEqual(member, {
        status: MempoolStatus.dropped_replace_by_fee,
        replaced_by_tx_id: winner.tx_id,
      });
      // rows of txs read: as sender, the sponsor's own tx of that nonce, if mined; as sponsor, the orphaned
      // copy, then the last mined (the first of the tie: the index orders it by id)
      const [{ own }] = await sql<{ own: number }[]>`
        SELECT count(*)::int AS own FROM txs
        WHERE sender_address = ${claim.sponsor_address} AND nonce = ${claim.nonce} AND canonical`;
      assert.ok(own <= 1, `${own}`);
      assert.equal(resolved.fetched, own + 2, `rows of txs read for a pair of ${MINED} mined txs`);
      // a probe per pair as sender; the sponsor's is read backwards under its LIMIT, with no sort of the
      // pair's rows between
      const onTxs = planEdges(resolved.plan).filter(([, n]) => n['Relation Name'] === 'txs');
      assert.deepEqual(
        onTxs.map(([parent, n]) => [
          parent['Node Type'],
          n['Node Type'],
          n['Index Name'],
          n['Scan Direction'],
        ]),
        [
          ['Nested Loop', 'Index Scan', 'txs_sender_nonce_idx', 'Forward'],
          ['Limit', 'Index Scan', 'txs_sponsor_nonce_idx', 'Backward'],
        ],
      );
    } finally {
      await store.close();
    }
  });
});
