import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { runCrashScenario } from '../support/crash-scenario.js';
import { stopOwnCluster } from '../support/database.js';

// Crash safety: a generated chain of ~20,000 txs posted to a real `serve` process that is SIGKILLed at 5
// seeded random points, once inside a message's transaction and once between a COMMIT and its 200; the
// sender re-delivers what got no 200. The index equals an uninterrupted replay. About two minutes on 2 cores
// (the restarts dominate). `CRASH_BLOCKS` sets the chain length (20 txs a block).

after(stopOwnCluster);

describe('crash safety of the live observer at ~20,000 txs (postgres)', () => {
  test('SIGKILLs while a chain is posted: nothing lost, nothing doubled', async () => {
    const blocks = Number(process.env.CRASH_BLOCKS ?? 1_000);
    const report = await runCrashScenario({
      blocks,
      accounts: 500,
      txsPerBlock: 20,
      seed: 'crash-soak',
      randomKills: 5,
    });
    console.log(`crash safety: ${JSON.stringify(report)}`);
    assert.equal(report.randomKills, 5);
    assert.equal(report.inTransactionKills, 1);
    assert.equal(report.afterCommitKills, 1);
    assert.ok(report.txs >= blocks * 18, `${report.txs} txs`);
    // The message killed inside its transaction was rolled back: its re-delivery applied it. The one killed
    // after its COMMIT was already in: its re-delivery was a duplicate.
    assert.ok((report.send.outcomesAfterRetry.applied ?? 0) >= 1, JSON.stringify(report.send));
    assert.ok((report.send.outcomesAfterRetry.duplicate ?? 0) >= 1, JSON.stringify(report.send));
  });
});
