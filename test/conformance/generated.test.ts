import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { stopOwnCluster } from '../support/database.js';
import { testEngines } from '../support/engines.js';
import { GENERATED_CHAINS } from '../support/shared.js';
import { expectedBeyondRecords } from './beyond-records.js';
import { BEYOND_FAMILIES, FAMILIES, formatReport, recordsPerFamily, runFixture } from './harness.js';

// The original API's answers on chains our generator wrote (../shared/golden/generated): every endpoint
// family, every record, on PostgreSQL and on PGlite (the smoke subset, support/engines.ts), as on the recorded
// fixtures (conformance.test.ts). Measured on the shared 2-core machine: PostgreSQL 66 s, PGlite 95 s.

after(stopOwnCluster);

for (const engine of testEngines(import.meta.url)) {
  describe(`conformance on generated chains (${engine})`, () => {
    for (const name of GENERATED_CHAINS) {
      test(name, async () => {
        const run = await runFixture(`generated/${name}`, engine, [...FAMILIES, ...BEYOND_FAMILIES]);
        const failures = run.results.filter((r) => !r.ok);
        const beyond = recordsPerFamily(run, BEYOND_FAMILIES);
        const beyondCount = Object.values(beyond).reduce((sum, n) => sum + n, 0);
        assert.ok(
          run.results.length - beyondCount >= 11_518,
          `golden records compared: ${run.results.length}`,
        );
        assert.deepEqual(
          beyond,
          expectedBeyondRecords(`generated/${name}`),
          'records compared per route beyond the ten',
        );
        assert.equal(failures.length, 0, formatReport([run], 10));
      });
    }
  });
}
