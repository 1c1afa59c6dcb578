// The compiled service: src/ (TypeScript) to dist/ (JavaScript) with tsc and tsconfig.build.json, plus what
// tsc does not copy (the SQL migrations), and a stamp that says when dist/ was made.
// Plain JavaScript: `npm start` runs it before anything is compiled, and without the dev dependencies.
//   node scripts/build.mjs              build (what `npm run build` runs)
//   node scripts/build.mjs --if-needed  build only when dist/ is missing or older than a source
//   node scripts/build.mjs --pack       before `npm pack`: build if needed, and ship the lockfile
//   node scripts/build.mjs --packed     after it: remove the lockfile's copy
import { spawnSync } from 'node:child_process';
import { copyFileSync, cpSync, existsSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import process from 'node:process';
import { fileURLToPath, URL } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const dist = join(root, 'dist');
/** Written last by a build that succeeded: its time is the build's. */
const stamp = join(dist, '.built');
/** What the build reads besides src/: a change to any of them makes dist/ stale too. */
const CONFIG_FILES = ['package.json', 'tsconfig.json', 'tsconfig.build.json', 'scripts/build.mjs'];

/** The newest modification time under `path` (a directory's own time counts: it changes when a file goes). */
function newestTime(path) {
  const info = statSync(path);
  if (!info.isDirectory()) return info.mtimeMs;
  let newest = info.mtimeMs;
  for (const name of readdirSync(path)) newest = Math.max(newest, newestTime(join(path, name)));
  return newest;
}

/**
 * Why dist/ must be built, or null when it is current: missing, or older than a source. A package
 * installed from its tarball has no src/: its dist/ is what it ships.
 */
export function staleness(checkout = root) {
  const src = join(checkout, 'src');
  if (!existsSync(src)) return null;
  const built = join(checkout, 'dist', '.built');
  if (!existsSync(built)) return 'dist/ has not been built';
  const inputs = [
    src,
    ...CONFIG_FILES.map((file) => join(checkout, file)).filter((file) => existsSync(file)),
  ];
  const newest = Math.max(...inputs.map(newestTime));
  return newest > statSync(built).mtimeMs ? 'the sources changed since dist/ was built' : null;
}

/** The TypeScript compiler's entry, or null where the dev dependencies are not installed. */
function compiler() {
  try {
    return createRequire(import.meta.url).resolve('typescript/bin/tsc');
  } catch {
    return null;
  }
}

/** A build that cannot run here (no compiler), or that failed. */
class BuildError extends Error {}

function build() {
  const tsc = compiler();
  if (!tsc) {
    throw new BuildError(
      'TypeScript is not installed (npm ci --omit=dev leaves it out): build where the dev dependencies are ' +
        '(npm ci && npm run build, then npm prune --omit=dev), or install the packaged service (docs/deploy.md)',
    );
  }
  rmSync(dist, { recursive: true, force: true });
  const compiled = spawnSync(process.execPath, [tsc, '-p', 'tsconfig.build.json'], {
    cwd: root,
    stdio: 'inherit',
  });
  if (compiled.status !== 0) throw new BuildError(`tsc failed (exit ${compiled.status ?? compiled.signal})`);
  cpSync(join(root, 'src/store/migrations'), join(dist, 'store/migrations'), {
    recursive: true,
    filter: (source) => !source.endsWith('.md'),
  });
  writeFileSync(stamp, `${new Date().toISOString()}\n`);
}

/**
 * Builds dist/ if it is missing or stale, saying so on stderr first (a build takes ~10 s). Where no compiler
 * is installed, a stale dist/ is run as it is (with a warning) and a missing one is an error.
 */
function buildIfNeeded() {
  const reason = staleness();
  if (reason === null) return;
  if (!compiler() && existsSync(stamp)) {
    process.stderr.write(`warning: ${reason}, and TypeScript is not installed: running dist/ as it is\n`);
    return;
  }
  process.stderr.write(`building dist/ (${reason}): tsc, about 10 s\n`);
  const started = performance.now();
  build();
  process.stderr.write(`built dist/ in ${((performance.now() - started) / 1000).toFixed(1)} s\n`);
}

/** Builds (`ifNeeded`: only a missing or stale dist/); a build that cannot be made is one line and exit 2. */
export function buildOrExit({ ifNeeded }) {
  try {
    if (ifNeeded) buildIfNeeded();
    else build();
  } catch (err) {
    if (!(err instanceof BuildError)) throw err;
    process.stderr.write(`error: cannot build dist/: ${err.message}\n`);
    process.exit(2);
  }
}

/**
 * The tarball carries the lockfile as npm-shrinkwrap.json (npm's name for a lockfile a package ships), so
 * an installed service gets the dependency versions this checkout was tested with, not the newest ones
 * its ranges allow.
 */
const shrinkwrap = join(root, 'npm-shrinkwrap.json');

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const [option] = process.argv.slice(2);
  if (option === '--packed') {
    rmSync(shrinkwrap, { force: true });
  } else {
    buildOrExit({ ifNeeded: option === '--if-needed' || option === '--pack' });
    if (option === '--pack') copyFileSync(join(root, 'package-lock.json'), shrinkwrap);
  }
}
