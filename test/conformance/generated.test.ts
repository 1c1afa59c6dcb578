import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { stopOwnCluster } from '../support/database.js';
import { testEngines } from '../support/engines.js';
import { GENERATED_CHAINS } from '../support/shared.js';
import { FAMILIES, formatReport, runFixture } from './harness.js';

// The original API's answers on chains our generator wrote (../shared/golden/generated): every endpoint
// family, every record, as on the recorded fixtures (conformance.test.ts). PGlite (the smoke subset,
// support/engines.ts) replays the same chain but leaves out the 6,883 with_transfers records, 60% of the
// answers, whose SQL conformance.test.ts already runs there: with them PGlite took 95 s, without 49 s
// (PostgreSQL, all of them: 66 s), on the shared 2-core machine.

const PGLITE_FAMILIES = FAMILIES.filter((family) => family !== 'address/with_transfers');

after(stopOwnCluster);

for (const engine of testEngines(import.meta.url)) {
  describe(`conformance on generated chains (${engine})`, () => {
    for (const name of GENERATED_CHAINS) {
      test(name, async () => {
        const families = engine === 'pglite' ? PGLITE_FAMILIES : FAMILIES;
        const run = await runFixture(`generated/${name}`, engine, families);
        const failures = run.results.filter((r) => !r.ok);
        const expected = engine === 'pglite' ? 11_518 - 6_883 : 11_518;
        assert.ok(run.results.length >= expected, `golden records compared: ${run.results.length}`);
        assert.equal(failures.length, 0, formatReport([run], 10));
      });
    }
  });
}
