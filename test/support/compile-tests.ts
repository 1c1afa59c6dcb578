import {
  copyFileSync,
  existsSync,
  linkSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  rmSync,
  symlinkSync,
} from 'node:fs';
import { join, relative } from 'node:path';
import { buildSync } from 'esbuild';

// test/run.ts runs the test files compiled, with plain node, rather than each through tsx: tsx's loader costs
// every file's process ~0.45 s of CPU before the file's first line, and about 1 ms per module it imports after
// (its hooks run on a thread of their own); over the suite's 109 files, importing what each file imports took
// 340 s of CPU through tsx (warm cache) and 152 s compiled (measured on 2 cores, 2026-11-29). The ingest
// worker threads the tests start load their module compiled too (src/worker-threads.ts), not through tsx.
//
// The compiled checkout is a mirror of this one in .tmp/test-build/, laid out as the checkout is: every .ts
// file beside its compiled .js, every other file a hard link (a test that lists src/ sees files: a symbolic
// link is not one to `Dirent.isFile()`), so the paths the tests take from their own `import.meta.url`
// (`new URL('../../', ...)`: docs/, package.json, the migrations) find the same files. The repository's
// JavaScript (scripts/*.mjs) and the ignored directories (dist/) are symbolic links: a module runs from its
// real path, so scripts/build.mjs still builds the checkout's dist/. Only the shared test data, beside the
// checkout, is not beside the mirror: test/run.ts passes its place on in SHARED_DIR.

/** Not mirrored: the mirror lives in .tmp/, and node_modules is found from the mirror by walking up. */
const SKIPPED = new Set(['.git', '.tmp', 'node_modules']);
/** Linked whole rather than walked: no test source in them, and they may be large or rebuilt while tests run. */
const LINKED = new Set(['dist', 'data', 'coverage', 'bench/out']);

function hardLink(from: string, to: string) {
  try {
    linkSync(from, to);
  } catch {
    copyFileSync(from, to); // another file system (or one without links): a copy reads the same
  }
}

/**
 * Compiles `checkout`'s TypeScript (esbuild, no type check: `npm test` runs tsc first) into a fresh mirror,
 * .tmp/test-build/, and returns the mirror's path.
 */
export function compileTests(checkout: string): string {
  const mirror = join(checkout, '.tmp', 'test-build');
  rmSync(mirror, { recursive: true, force: true });
  const sources: string[] = [];
  const walk = (dir: string) => {
    mkdirSync(join(mirror, relative(checkout, dir)), { recursive: true });
    for (const name of readdirSync(dir)) {
      const path = join(dir, name);
      const inside = relative(checkout, path);
      if (dir === checkout && SKIPPED.has(name)) continue;
      if (!LINKED.has(inside) && lstatSync(path).isDirectory()) {
        walk(path);
        continue;
      }
      if (LINKED.has(inside) || /\.[cm]?js$/.test(name)) symlinkSync(path, join(mirror, inside));
      else hardLink(path, join(mirror, inside));
      if (name.endsWith('.ts') && !name.endsWith('.d.ts')) sources.push(path);
    }
  };
  walk(checkout);
  if (existsSync(join(checkout, '.tmp'))) symlinkSync(join(checkout, '.tmp'), join(mirror, '.tmp'));
  // linked source maps: read only when a run asks for them (TEST_SOURCE_MAPS=1 in test/run.ts), as
  // --enable-source-maps parses every module's map as it loads (~0.3 s more for a file importing the server)
  buildSync({
    entryPoints: sources,
    outdir: mirror,
    outbase: checkout,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    sourcemap: 'linked',
    logLevel: 'warning',
  });
  return mirror;
}
