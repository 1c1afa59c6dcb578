import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { after, describe, test } from 'node:test';
import type { Engine, Sql } from '../../src/store/db.js';
import { BLOCK_AT_BURN_HEIGHT, BLOCKS_AT_BURN_HEIGHTS } from '../../src/store/read/blocks.js';
import { anchoredVisibleRow } from '../../src/store/visibility.js';
import { get, startTestApi } from '../support/api.js';
import { stopOwnCluster } from '../support/database.js';
import { testEngines } from '../support/engines.js';

// Block by burn block height answers the block's tx ids from the list stored with the block (`blocks.tx_ids_json`,
// migration 023, written at ingest) and splices that JSON text into the serialized block. This proves, on
// recorded chains with reorgs, orphaned and out-of-order microblocks and a genesis block adopted by block 1:
// - every block's stored list is the ids of the tx rows stored under it, newest first;
// - the txs an answer lists are exactly those an anchored read sees in that block (the statement the route
//   used before the list was stored: the block's tx rows filtered by the visibility rule);
// - the answer's bytes are what the route's 200 serializer makes of the same block with its txs parsed;
// - migration 023's backfill of databases indexed before it writes the same lists as ingest does;
// - the microblocks an answer lists as accepted (streamed on its parent) and streamed (on it), and the txs an
//   anchored read sees in each accepted one, are those the tables hold (the counts come from a second
//   statement, run only when the block accepted microblocks: a block that did still lists them and counts).

after(stopOwnCluster);

const ROUTE = '/extended/v1/block/by_burn_block_height/';
const FIXTURES = [
  'mainnet-reorg-scenario1',
  'mainnet-reorg-scenario2',
  'mainnet-out-of-order-microblock',
  'mainnet-block0',
  'poisonmicroblock',
] as const;

/**
 * The txs, summed over every answer, in the microblocks the answered blocks accepted: each is counted in
 * `microblock_tx_count` (a lookup skipped or emptied for blocks that did accept microblocks fails here).
 */
const ACCEPTED_MICROBLOCK_TXS: Partial<Record<(typeof FIXTURES)[number], number>> = {
  'mainnet-reorg-scenario1': 34,
  'mainnet-reorg-scenario2': 16,
  'mainnet-out-of-order-microblock': 6,
};

/** Migration 023's backfill statement, as the file runs it. */
async function backfillStatement(): Promise<string> {
  const file = await readFile(
    new URL('../../src/store/migrations/023_block_tx_ids.sql', import.meta.url),
    'utf8',
  );
  const statement = /^UPDATE blocks [^;]+;/m.exec(file)?.[0];
  assert.ok(statement, "023's UPDATE statement");
  return statement;
}

/** The ids of the tx rows stored under a block, newest first, read independently of the store's code. */
async function storedTxIds(sql: Sql, indexBlockHash: string): Promise<string[]> {
  const rows = await sql<{ tx_id: string }[]>`
    SELECT tx_id FROM txs WHERE index_block_hash = ${indexBlockHash}
    ORDER BY microblock_sequence DESC, tx_index DESC`;
  return rows.map((r) => r.tx_id);
}

/** The canonical microblocks streamed on a block, by sequence, read independently of the store's code. */
async function canonicalMicroblocksOn(sql: Sql, parentIndexBlockHash: string): Promise<string[]> {
  const rows = await sql<{ microblock_hash: string }[]>`
    SELECT microblock_hash FROM microblocks
    WHERE parent_index_block_hash = ${parentIndexBlockHash} AND microblock_canonical
    ORDER BY microblock_sequence`;
  return rows.map((r) => r.microblock_hash);
}

/** The number of txs an anchored read sees in a microblock. */
async function visibleTxCount(sql: Sql, microblockHash: string): Promise<number> {
  const [{ count }] = await sql.unsafe<{ count: number }[]>(
    `SELECT count(*)::int AS count FROM txs t WHERE t.microblock_hash = $1 AND ${anchoredVisibleRow('t')}`,
    [microblockHash],
  );
  return count;
}

/** The tx ids an anchored read sees in a block, newest first (the route's statement before migration 023). */
async function visibleTxIds(sql: Sql, indexBlockHash: string): Promise<string[]> {
  const rows = await sql.unsafe<{ tx_id: string }[]>(
    `SELECT t.tx_id FROM txs t WHERE t.index_block_hash = $1 AND ${anchoredVisibleRow('t')}
     ORDER BY t.microblock_sequence DESC, t.tx_index DESC`,
    [indexBlockHash],
  );
  return rows.map((r) => r.tx_id);
}

for (const engine of testEngines(import.meta.url) as Engine[]) {
  for (const fixture of FIXTURES) {
    describe(`block by burn block height, txs from the list stored with each block (${fixture}, ${engine})`, () => {
      test('lists equal the stored rows, answers equal the visible rows and the serializer', async () => {
        const { app, store, close } = await startTestApi({ engine, fixture });
        try {
          let serializer: ((answer: unknown) => string) | undefined;
          app.addHook('onSend', async (request, reply, payload) => {
            if (request.routeOptions.url?.startsWith(ROUTE) && reply.statusCode === 200) {
              serializer ??= reply.getSerializationFunction('200') as (answer: unknown) => string;
            }
            return payload;
          });

          const blocks = await store.sql<
            { index_block_hash: string; canonical: boolean; tx_ids_json: string; burn_block_height: number }[]
          >`SELECT index_block_hash, canonical, tx_ids_json, burn_block_height FROM blocks ORDER BY block_height`;
          let orphaned = 0;
          let listed = 0;
          for (const block of blocks) {
            const stored = JSON.parse(block.tx_ids_json) as string[];
            assert.deepEqual(
              stored,
              await storedTxIds(store.sql, block.index_block_hash),
              block.index_block_hash,
            );
            const visible = await visibleTxIds(store.sql, block.index_block_hash);
            // the rule the route applies to the stored list (visibility.ts blockRowsVisible)
            assert.deepEqual(block.canonical ? stored : [], visible, block.index_block_hash);
            if (!block.canonical) orphaned += 1;
            listed += stored.length;
          }
          assert.ok(listed > 0, 'blocks with txs');

          const burnHeights = [...new Set(blocks.map((b) => b.burn_block_height))];
          let answered = 0;
          let acceptedMicroblockTxs = 0;
          for (const height of burnHeights) {
            const res = await get(app, `${ROUTE}${height}`);
            assert.equal(res.statusCode, 200, `${height}`);
            assert.equal(res.headers['content-type'], 'application/json; charset=utf-8', `${height}`);
            const body = JSON.parse(res.body) as {
              index_block_hash: string;
              txs: string[];
              microblocks_accepted: string[];
              microblocks_streamed: string[];
              microblock_tx_count: Record<string, number>;
            };
            const txs = await visibleTxIds(store.sql, body.index_block_hash);
            assert.deepEqual(body.txs, txs, `${height}`);
            const [{ parent }] = await store.sql<{ parent: string }[]>`
              SELECT parent_index_block_hash AS parent FROM blocks WHERE index_block_hash = ${body.index_block_hash}`;
            const accepted = await canonicalMicroblocksOn(store.sql, parent);
            assert.deepEqual(body.microblocks_accepted, accepted, `${height}`);
            assert.deepEqual(
              body.microblocks_streamed,
              await canonicalMicroblocksOn(store.sql, body.index_block_hash),
              `${height}`,
            );
            const counts: [string, number][] = [];
            for (const hash of accepted) counts.push([hash, await visibleTxCount(store.sql, hash)]);
            // entries in sequence order: the answer's bytes depend on it
            assert.deepEqual(Object.entries(body.microblock_tx_count), counts, `${height}`);
            acceptedMicroblockTxs += counts.reduce((sum, [, n]) => sum + n, 0);
            assert.ok(serializer, 'the 200 serializer of the route');
            assert.equal(res.body, serializer({ ...body, txs }), `${height}`);
            answered += 1;
          }
          assert.equal(answered, burnHeights.length);
          if (ACCEPTED_MICROBLOCK_TXS[fixture] !== undefined) {
            assert.equal(acceptedMicroblockTxs, ACCEPTED_MICROBLOCK_TXS[fixture]);
          }
          if (fixture.startsWith('mainnet-reorg')) assert.ok(orphaned > 0, 'orphaned blocks');

          // the backfill rewrites every list to what ingest wrote
          const lists = async () =>
            store.sql<{ index_block_hash: string; tx_ids_json: string }[]>`
              SELECT index_block_hash, tx_ids_json FROM blocks ORDER BY index_block_hash`;
          const written = await lists();
          await store.sql`UPDATE blocks SET tx_ids_json = '[]'`;
          await store.sql.unsafe(await backfillStatement());
          assert.deepEqual(await lists(), written);

          const missing = await get(app, `${ROUTE}${Math.max(...burnHeights) + 1000}`);
          assert.equal(missing.statusCode, 404);
          assert.deepEqual(JSON.parse(missing.body), {
            statusCode: 404,
            error: 'Not Found',
            message: 'cannot find block by height',
          });
        } finally {
          await close();
        }
      });
    });
  }
}

/** The plan nodes of an EXPLAIN (FORMAT JSON) plan, depth first. */
function planNodes(node: PlanNode): PlanNode[] {
  return [node, ...(node.Plans ?? []).flatMap(planNodes)];
}
interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  'Index Name'?: string;
  Plans?: PlanNode[];
}

for (const engine of testEngines(import.meta.url) as Engine[]) {
  describe(`block by burn block height, the microblock lookups (${engine})`, () => {
    test('are index-only probes of the canonical microblocks, not scans of the table, in the generic plans', async () => {
      const { store, close } = await startTestApi({ engine, fixture: 'mainnet-out-of-order-microblock' });
      try {
        const [{ count }] = await store.sql<
          { count: number }[]
        >`SELECT count(*)::int AS count FROM microblocks`;
        assert.ok(count > 0, 'the chain streamed microblocks');
        // The table grown to the 1M bench chain's size (118 rows on 74 parents, 7 pages) with orphaned copies
        // of its rows on other parents: below a page or two a scan is as cheap as a probe, and the planner
        // rightly scans.
        await store.sql`
          INSERT INTO microblocks
          SELECT '0x' || md5(m.microblock_hash || n) || md5(n || m.microblock_hash), m.microblock_sequence,
            m.microblock_parent_hash, '0x' || md5(m.parent_index_block_hash || n) || md5(n || m.parent_index_block_hash),
            m.index_block_hash, m.block_height, m.burn_block_hash, m.burn_block_height, m.burn_block_time, false,
            m.received_at
          FROM microblocks m, generate_series(1, ceil(120.0 / ${count})::int) AS n`;
        // a database serving reads is vacuumed (bench/run.ts does it before loading it; autovacuum would): an
        // index-only probe needs the visibility map
        await store.sql`VACUUM ANALYZE microblocks`;
        const [{ height }] = await store.sql<{ height: number }[]>`
          SELECT burn_block_height AS height FROM blocks b
          WHERE EXISTS (SELECT FROM microblocks m WHERE m.parent_index_block_hash = b.parent_index_block_hash)
          ORDER BY block_height LIMIT 1`;
        // the plan a prepared statement settles on (the route runs it prepared, thousands of times): the
        // statement of one burn height, and that of the heights asked together (batched)
        const genericPlan = (declaration: string, text: string, execute: string) =>
          store.sql.begin(async (tx) => {
            await tx`SET LOCAL plan_cache_mode = force_generic_plan`;
            await tx.unsafe(`PREPARE ${declaration} AS ${text}`);
            const [row] = await tx.unsafe<{ 'QUERY PLAN': [{ Plan: PlanNode }] }[]>(
              `EXPLAIN (FORMAT JSON) EXECUTE ${execute}`,
            );
            await tx.unsafe(`DEALLOCATE ${declaration.split('(')[0]}`);
            return row['QUERY PLAN'][0].Plan;
          });
        const plans = [
          await genericPlan(
            'block_at_burn_height(integer)',
            BLOCK_AT_BURN_HEIGHT,
            `block_at_burn_height(${Number(height)})`,
          ),
          await genericPlan(
            'blocks_at_burn_heights(integer[])',
            BLOCKS_AT_BURN_HEIGHTS,
            `blocks_at_burn_heights(ARRAY[${Number(height)}, ${Number(height) + 1}])`,
          ),
        ];
        for (const plan of plans) {
          const onMicroblocks = planNodes(plan).filter((n) => n['Relation Name'] === 'microblocks');
          assert.deepEqual(
            onMicroblocks.map((n) => [n['Node Type'], n['Index Name']]),
            [
              ['Index Only Scan', 'microblocks_canonical_parent_idx'],
              ['Index Only Scan', 'microblocks_canonical_parent_idx'],
            ],
          );
        }
      } finally {
        await close();
      }
    });
  });
}
