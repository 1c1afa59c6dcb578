// Runs the static checks of `npm test` at once (tsc, ESLint, Prettier, knip: ~30 s one after another on 2
// cores, ~20 s together) and prints each one's output when it ends, whole, under its name. Exits non-zero if
// any failed, naming them.
//   node scripts/checks.mjs   (what `npm run lint` and `npm test` run; `npm run typecheck` is tsc alone)
// Plain JavaScript, like the other scripts run before anything is compiled.
import { spawn } from 'node:child_process';
import process from 'node:process';

const CHECKS = {
  typecheck: ['tsc', '--noEmit'],
  eslint: ['eslint', '.'],
  prettier: ['prettier', '--check', '.'],
  knip: ['sh', '-c', 'knip --no-config-hints && knip --production'],
};
const wanted = process.argv.slice(2);
const unknown = wanted.filter((name) => !(name in CHECKS));
if (unknown.length > 0) {
  process.stderr.write(
    `unknown check ${unknown.join(', ')}: the checks are ${Object.keys(CHECKS).join(', ')}\n`,
  );
  process.exit(2);
}

/** Runs one check with node_modules/.bin on the PATH (as npm scripts do); resolves to its output and code. */
function run(name) {
  const [command, ...args] = CHECKS[name];
  return new Promise((resolve) => {
    const child = spawn(command, args, {
      env: { ...process.env, PATH: `${process.cwd()}/node_modules/.bin:${process.env.PATH}` },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk) => (output += chunk));
    child.stderr.on('data', (chunk) => (output += chunk));
    child.on('error', (err) => resolve({ name, output: `${output}${err.message}\n`, code: 1 }));
    child.on('close', (code) => resolve({ name, output, code: code ?? 1 }));
  });
}

const names = wanted.length > 0 ? wanted : Object.keys(CHECKS);
const failed = [];
await Promise.all(
  names.map(async (name) => {
    const { output, code } = await run(name);
    process.stdout.write(`\n> ${name}: ${code === 0 ? 'passed' : 'FAILED'}\n${output}`);
    if (code !== 0) failed.push(name);
  }),
);
if (failed.length > 0) {
  process.stderr.write(`\nfailed: ${failed.join(', ')}\n`);
  process.exit(1);
}
