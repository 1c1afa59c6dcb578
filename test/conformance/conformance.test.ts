import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { stopOwnCluster } from '../support/database.js';
import { runsOn, testEngines } from '../support/engines.js';
import { fixtureNames } from '../support/shared.js';
import { expectedBeyondRecords } from './beyond-records.js';
import { BEYOND_FAMILIES, formatReport, recordsPerFamily, runFixture, type Family } from './harness.js';

after(stopOwnCluster);

/** The endpoint families built so far; each must match the original API on every golden record. */
const CHECKED_FAMILIES: Family[] = [
  'blocks',
  'block/by_burn_block_height',
  'address/balances',
  'address/transactions_with_transfers',
  'address/with_transfers',
  'tx',
  'tx/multiple',
  'mempool/stats',
  'mempool/fees',
  'contracts/status',
];

for (const engine of testEngines(import.meta.url)) {
  describe(`conformance with the original API (${engine})`, () => {
    for (const fixture of fixtureNames().filter((f) => runsOn(engine, import.meta.url, f))) {
      test(fixture, async () => {
        const run = await runFixture(fixture, engine, [...CHECKED_FAMILIES, ...BEYOND_FAMILIES]);
        const failures = run.results.filter((r) => !r.ok);
        assert.ok(run.results.length > 0, 'golden records to compare');
        assert.deepEqual(
          recordsPerFamily(run, BEYOND_FAMILIES),
          expectedBeyondRecords(fixture),
          'records compared per route beyond the ten',
        );
        assert.equal(failures.length, 0, formatReport([run], 10));
      });
    }
  });
}
