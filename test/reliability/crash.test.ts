import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { runCrashScenario } from '../support/crash-scenario.js';
import { stopOwnCluster } from '../support/database.js';
import { testEngines } from '../support/engines.js';

// Crash safety: a generated chain posted to a real `serve` process that is SIGKILLed at seeded random points,
// once inside a message's transaction and once between a COMMIT and its 200; the sender re-delivers what got
// no 200. The index equals an uninterrupted replay. On PostgreSQL ~20,000 txs and 5 random kills (about two
// minutes on 2 cores: the restarts dominate; `CRASH_BLOCKS` sets the chain length, 20 txs a block); on PGlite
// (a data directory, as `npm start` uses) a shorter chain, 2 random kills.

after(stopOwnCluster);

const SIZES = {
  postgres: { blocks: Number(process.env.CRASH_BLOCKS ?? 1_000), randomKills: 5 },
  pglite: { blocks: 100, randomKills: 2 },
};

for (const engine of testEngines(import.meta.url)) {
  const { blocks, randomKills } = SIZES[engine];
  describe(`crash safety of the live observer at ~${(blocks * 20).toLocaleString('en')} txs (${engine})`, () => {
    test('SIGKILLs while a chain is posted: nothing lost, nothing doubled', async () => {
      const report = await runCrashScenario({
        engine,
        blocks,
        accounts: 500,
        txsPerBlock: 20,
        seed: 'crash-soak',
        randomKills,
      });
      console.log(`crash safety (${engine}): ${JSON.stringify(report)}`);
      assert.equal(report.randomKills, randomKills);
      assert.equal(report.inTransactionKills, 1);
      assert.equal(report.afterCommitKills, 1);
      assert.ok(report.txs >= blocks * 18, `${report.txs} txs`);
      // The message killed inside its transaction was rolled back: its re-delivery applied it. The one killed
      // after its COMMIT was already in: its re-delivery was a duplicate.
      assert.ok((report.send.outcomesAfterRetry.applied ?? 0) >= 1, JSON.stringify(report.send));
      assert.ok((report.send.outcomesAfterRetry.duplicate ?? 0) >= 1, JSON.stringify(report.send));
    });
  });
}
