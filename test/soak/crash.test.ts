import { after, test } from 'node:test';
import { assertCrashSafe, crashSafetyTitle } from '../support/crash-scenario.js';
import { stopOwnCluster } from '../support/database.js';

// Crash safety at full size (`npm run test:soak`, or `npx tsx test/run.ts soak/crash` alone; about two minutes on
// 2 cores): ~20,000 txs posted to a `serve` process on PostgreSQL, SIGKILLed at 5 random points besides the two
// test hooks (the scenario: support/crash-scenario.ts; `npm test` runs it smaller: test/reliability/crash.test.ts).
// `CRASH_BLOCKS` sets the chain length (20 txs a block).

after(stopOwnCluster);

const size = { blocks: Number(process.env.CRASH_BLOCKS ?? 1_000), randomKills: 5 };
test(crashSafetyTitle('postgres', size), () => assertCrashSafe('postgres', size));
