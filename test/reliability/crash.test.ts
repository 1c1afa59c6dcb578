import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { runCrashScenario } from '../support/crash-scenario.js';
import { stopOwnCluster } from '../support/database.js';

// Crash safety on a small chain (the ~20,000-tx run is in test/soak/): SIGKILL at 5 seeded random points and
// once inside a message's transaction, restarts, re-delivery; the index equals an uninterrupted replay.

after(stopOwnCluster);

describe('crash safety of the live observer (postgres)', () => {
  test('SIGKILLs while a chain is posted: nothing lost, nothing doubled', async () => {
    const report = await runCrashScenario({
      blocks: Number(process.env.CRASH_BLOCKS ?? 100),
      accounts: 60,
      txsPerBlock: 20,
      seed: 'crash-small',
      randomKills: 5,
    });
    console.log(`crash safety: ${JSON.stringify(report)}`);
    assert.equal(report.randomKills, 5);
    assert.equal(report.inTransactionKills, 1);
    // The message killed inside its transaction was rolled back: its re-delivery applied it.
    assert.ok((report.send.outcomesAfterRetry.applied ?? 0) >= 1, JSON.stringify(report.send));
    assert.ok(report.send.resent >= 6);
  });
});
