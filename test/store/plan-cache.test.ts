import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { RecordedMessage } from '../../src/protocol/tsv.js';
import { migrate } from '../../src/store/migrate.js';
import { Store } from '../../src/store/store.js';
import { RESOLVE_FROM_STORED } from '../../src/store/write/mempool.js';
import { connectTestDatabase, createTestDatabaseUrl, stopOwnCluster } from '../support/database.js';
import { generatedMessages, ingestMessages } from '../support/delivery.js';

// A message's transaction plans each statement that reads a table with its parameters, on every call, and
// the inserts from arrays once per connection (store/write/plans.ts). PostgreSQL counts, per prepared
// statement of a session, the custom plans it made and the calls that ran its generic plan
// (pg_prepared_statements): after a replay on one connection, those counts say which statement was planned
// how. (Under `auto`, PostgreSQL tries a generic plan after 5 custom ones: a reading statement called more
// often than that and never run on a generic plan was planned on every call.)

const CHAIN = { blocks: 30, accounts: 12, seed: 'plan-cache', txsPerBlock: 10, workers: 0 };
let messages: RecordedMessage[];

before(async () => {
  ({ messages } = await generatedMessages(CHAIN));
});

after(() => stopOwnCluster());

interface PlanCounts {
  statement: string;
  generic_plans: number;
  custom_plans: number;
}

/**
 * Statements with parameters whose plan cannot depend on the tables or the parameters: inserts from arrays,
 * the log's insert and the notification (sent before the transaction switches to planning per call).
 */
const ONE_PLAN = [
  /^INSERT INTO \w+( AS \w+)? \([\w, ]+\) SELECT unnest\(/,
  /^INSERT INTO observer_messages \(received_at, path, payload, content_hash\) VALUES \(\$1, \$2, \$3, \$4\)/,
  /^SELECT pg_notify\(\$1, ''\)$/,
];

const flat = (text: string) => text.replace(/\s+/g, ' ').trim();

describe('plan cache of ingest statements (postgres)', () => {
  test('reading statements get a custom plan on every call, inserts from arrays their generic plan', async () => {
    const db = await connectTestDatabase(await createTestDatabaseUrl(), { poolMax: 1 });
    await migrate(db.sql);
    const store = new Store(db);
    try {
      // statements without parameters have one plan (PostgreSQL makes no custom plan for them); the
      // migration's ran before any message
      const planCounts = async () =>
        (
          await store.sql<PlanCounts[]>`
            SELECT statement, generic_plans::int AS generic_plans, custom_plans::int AS custom_plans
            FROM pg_prepared_statements WHERE cardinality(parameter_types) > 0`
        ).map((c) => ({ ...c, statement: flat(c.statement) }));
      const genericBefore = new Map((await planCounts()).map((c) => [c.statement, c.generic_plans]));
      await ingestMessages(store, messages);
      const counts = await planCounts();
      /** the counts of the statements whose text starts with `start`, summed (e.g. an insert with and without ON CONFLICT) */
      const of = (start: string) => {
        const found = counts.filter((c) => c.statement.startsWith(flat(start)));
        assert.ok(found.length > 0, `a prepared statement starting with ${start}`);
        return {
          generic_plans: found.reduce((n, c) => n + c.generic_plans, 0),
          custom_plans: found.reduce((n, c) => n + c.custom_plans, 0),
        };
      };

      // inserts from arrays: planned once (no custom plan), run on that plan for each block or mempool batch
      const [{ blocks, mempoolBatches }] = await store.sql<{ blocks: number; mempoolBatches: number }[]>`
        SELECT (SELECT count(*)::int FROM blocks) AS blocks,
          (SELECT count(*)::int FROM observer_messages WHERE path = '/new_mempool_tx') AS "mempoolBatches"`;
      assert.ok(blocks >= 30 && mempoolBatches >= 10, `${blocks} blocks, ${mempoolBatches} mempool batches`);
      assert.deepEqual(of('INSERT INTO blocks ('), { custom_plans: 0, generic_plans: blocks });
      for (const insert of ['INSERT INTO txs (', 'INSERT INTO events (', 'INSERT INTO stx_balances AS b']) {
        const c = of(insert);
        assert.equal(c.custom_plans, 0, insert);
        assert.ok(c.generic_plans >= blocks - 1, `${insert}: ${c.generic_plans} calls`);
      }
      const mempoolInsert = of('INSERT INTO mempool_txs (');
      assert.equal(mempoolInsert.custom_plans, 0);
      assert.ok(mempoolInsert.generic_plans >= 10, `${mempoolInsert.generic_plans} mempool inserts`);

      // the statements that read tables: a custom plan on each call, never the generic one
      for (const reading of [
        RESOLVE_FROM_STORED,
        'WITH tip_tx AS (',
        'UPDATE mempool_txs AS m SET pruned = true FROM unnest($1::text[]) AS t(tx_id)',
        'SELECT DISTINCT tx_id FROM txs WHERE tx_id = ANY($1)',
        'SELECT tx_id, pruned FROM mempool_txs WHERE tx_id = ANY($1)',
        'WITH u AS (SELECT unnest($1::text[]) AS principal',
      ]) {
        const c = of(reading);
        assert.equal(c.generic_plans, 0, `${reading.slice(0, 60)}: no generic plan`);
        assert.ok(c.custom_plans > 5, `${reading.slice(0, 60)}: ${c.custom_plans} custom plans`);
      }

      // and no statement outside the one-plan kinds ever ran on a generic plan
      const generic = counts.filter(
        (c) =>
          c.generic_plans > (genericBefore.get(c.statement) ?? 0) &&
          !ONE_PLAN.some((p) => p.test(c.statement)),
      );
      assert.deepEqual(
        generic.map((c) => c.statement.slice(0, 80)),
        [],
      );
      assert.ok(counts.length > 20, `${counts.length} prepared statements`);
    } finally {
      await store.close();
    }
  });
});
