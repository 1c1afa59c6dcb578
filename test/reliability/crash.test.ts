import { after, test } from 'node:test';
import { assertCrashSafe, crashSafetyTitle } from '../support/crash-scenario.js';
import { stopOwnCluster } from '../support/database.js';
import { testEngines } from '../support/engines.js';

// Crash safety (support/crash-scenario.ts): a generated chain posted to a real `serve` process that is
// SIGKILLed at seeded random points, once inside a message's transaction and once between a COMMIT and its
// 200; the sender re-delivers what got no 200. The index equals an uninterrupted replay. In `npm test`, sized
// for the suite's 10 minutes (each restart costs seconds of a 2-core machine, a PGlite one more): on
// PostgreSQL ~2,000 txs and 2 random kills, on PGlite (a data directory, as `npm start` uses) ~1,200 txs and
// 1 random kill. The ~20,000-tx run with 5 random kills is the soak's (test/soak/crash.test.ts).

after(stopOwnCluster);

const SIZES = {
  postgres: { blocks: 100, randomKills: 2 },
  pglite: { blocks: 60, randomKills: 1 },
};

for (const engine of testEngines(import.meta.url)) {
  test(crashSafetyTitle(engine, SIZES[engine]), () => assertCrashSafe(engine, SIZES[engine]));
}
