import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildOrExit } from '../../scripts/build.mjs';

// The service as operators run it, compiled (dist/), for the tests that start it as a child process. A start
// through tsx compiles the sources on the way: measured on 2 cores, `serve` on PGlite answered /health after
// 11.9 s through tsx and 8.9 s compiled, `--help` took 0.6-1.0 s against 0.17 s, and the suite starts the
// service and the CLI more than a hundred times. `npm run dev` (through tsx) keeps its own test
// (test/cli/production.test.ts).

const root = fileURLToPath(new URL('../../', import.meta.url));

/**
 * The path of the compiled CLI, dist/ built first when it is missing or older than a source. test/run.ts asks
 * before any test file runs, so that two files running at once never build it together.
 */
export function compiledMain(): string {
  buildOrExit({ ifNeeded: true });
  return join(root, 'dist', 'cli', 'main.js');
}
