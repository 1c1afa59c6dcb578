import { relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Engine } from '../../src/store/db.js';

// Which database engines the tests run on, decided here and nowhere else.
//
// PostgreSQL runs every test. PGlite (the embedded engine `npm start` uses) runs the same migrations and the
// same SQL through the same client, so a smoke subset proves that SQL works there without paying PGlite's
// speed (a fresh PGlite costs ~2.5 s to create and runs statements 3-7x slower: with every suite on both
// engines, PGlite took 466 s of the suite's 850 s of test time on 2 cores). The subset: ingest (the
// observer's contract), every endpoint family (the original API's answers on recorded chains, a reorg
// included), crash safety of a data directory, and the demo seeding `npm start` runs
// (test/ingest/generator.test.ts opens PGlite itself).
//
// TEST_ENGINES=postgres|pglite|postgres,pglite restricts the engines; TEST_PGLITE=all runs every suite on
// PGlite too (for a change to SQL that only PGlite might reject).

/** The engines TEST_ENGINES selects (default both). */
export const engines: Engine[] = (process.env.TEST_ENGINES?.split(',') as Engine[] | undefined) ?? [
  'postgres',
  'pglite',
];

interface Smoke {
  why: string;
  /**
   * the cases of the file that run on PGlite, by fixture name (`GENERATED_CASE` for the chain a file generates
   * itself); absent: all of them
   */
  only?: string[];
}

/** The case name of a chain a test file generates itself, rather than a fixture. */
export const GENERATED_CASE = 'generated';

/** The PGlite smoke subset: test files (from the checkout's root) and why each is in it. */
export const PGLITE_SMOKE: Record<string, Smoke> = {
  'test/ingest/observer.test.ts': {
    why: 'ingest: 400 writes nothing, a re-sent block changes nothing, a message failing half-way rolls back',
  },
  'test/api/access-control.test.ts': {
    why: 'API keys: a valid key is served on its own budget whatever its IP spent; revocations reach the server',
  },
  'test/ingest/block-reannounced.test.ts': {
    why: 'a real node re-announces a known block with other content: taken (200), the index unchanged',
  },
  'test/reliability/crash.test.ts': {
    why: 'crash safety of a PGlite data directory: SIGKILLs while a chain is posted lose and double nothing',
  },
  'test/reliability/large-message.test.ts': {
    why: "a large block does not stall /health: PGlite runs its statements on the process's main thread",
  },
  'test/store/migrate.test.ts': {
    why: 'the migrations: each in its own transaction, duplicate versions refused, every file runs on PGlite',
  },
  'test/store/list-indexes.test.ts': {
    why: "ingest's upkeep of the chain totals, sponsor rows and NFT custody through reorgs, and the migrations filling them",
    only: [GENERATED_CASE],
  },
  'test/conformance/generated.test.ts': {
    why: 'every endpoint family against the original API on a generated chain (forks, microblocks, mempool)',
  },
  'test/push/push.test.ts': {
    why: 'live push: the feed reads what ingest committed (forks, microblocks, mempool) through the same SQL',
  },
  'test/store/push-changes.test.ts': {
    why: 'live push reads: a fork switch and microblocks in one repeatable-read snapshot, PGlite included',
  },
  'test/conformance/conformance.test.ts': {
    why: 'every endpoint family against the original API, on a chain with contracts and on one with a reorg',
    only: ['mocknet', 'mainnet-reorg-scenario2'],
  },
};

const checkout = fileURLToPath(new URL('../../', import.meta.url));
const everySuiteOnPglite = process.env.TEST_PGLITE === 'all';

function smokeOf(testFileUrl: string): Smoke | undefined {
  return PGLITE_SMOKE[relative(checkout, fileURLToPath(testFileUrl))];
}

/** The engines the suites of a test file run on: pass the file's `import.meta.url`. */
export function testEngines(testFileUrl: string): Engine[] {
  if (everySuiteOnPglite || smokeOf(testFileUrl)) return engines;
  return engines.filter((engine) => engine !== 'pglite');
}

/** Whether the case `name` of a test file runs on `engine` (for files whose smoke names its cases). */
export function runsOn(engine: Engine, testFileUrl: string, name: string): boolean {
  if (engine !== 'pglite' || everySuiteOnPglite) return true;
  const only = smokeOf(testFileUrl)?.only;
  return only === undefined || only.includes(name);
}
