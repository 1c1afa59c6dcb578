import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { compiledMain } from './compiled.js';

// The real CLI in a child process (compiled: support/compiled.ts), with the list of modules it
// loaded: a module-load hook (registered from a data: URL) appends every URL Node loads to a file.

const root = fileURLToPath(new URL('../../', import.meta.url));

const TRACE_HOOKS = `data:text/javascript,${encodeURIComponent(`
import { appendFileSync } from 'node:fs';
export async function load(url, context, nextLoad) {
  appendFileSync(process.env.MODULE_TRACE_FILE, url + '\\n');
  return nextLoad(url, context);
}`)}`;
const REGISTER_TRACE = `data:text/javascript,${encodeURIComponent(
  `import { register } from 'node:module'; register(${JSON.stringify(TRACE_HOOKS)});`,
)}`;

export interface CliRun {
  /** exit code (null when killed) */
  code: number | null;
  stdout: string;
  stderr: string;
  /** wall time from spawn to exit */
  ms: number;
  /** URLs of the modules the process loaded (node_modules and dist), in load order */
  modules: string[];
}

const shellQuote = (word: string) => `'${word.replace(/'/g, `'\\''`)}'`;

/**
 * Runs the CLI with `args`. `terminal`: inside a pseudo-terminal (util-linux `script`), so stdout and
 * stderr are one TTY as in an interactive shell (both then arrive in `stdout`).
 */
export async function runCli(
  args: string[],
  options: { env?: Record<string, string>; terminal?: boolean; timeoutMs?: number } = {},
): Promise<CliRun> {
  const dir = mkdtempSync(join(tmpdir(), 'cli-trace-'));
  const traceFile = join(dir, 'modules');
  const node = [process.execPath, '--import', REGISTER_TRACE, compiledMain(), ...args];
  const [command, commandArgs] = options.terminal
    ? ['script', ['--quiet', '--return', '--command', node.map(shellQuote).join(' '), '/dev/null']]
    : [node[0], node.slice(1)];
  const started = performance.now();
  const child = spawn(command, commandArgs as string[], {
    cwd: root,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, LOG_LEVEL: 'info', ...options.env, MODULE_TRACE_FILE: traceFile },
  });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
  child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 120_000);
  const code = await new Promise<number | null>((resolve) => child.on('exit', (c) => resolve(c)));
  clearTimeout(timer);
  const ms = performance.now() - started;
  let modules: string[] = [];
  try {
    modules = readFileSync(traceFile, 'utf8').split('\n').filter(Boolean);
  } catch {
    // nothing loaded through the hook
  }
  rmSync(dir, { recursive: true, force: true });
  return { code, stdout, stderr, ms, modules };
}

/** What a command must not load before its arguments, settings and ports are checked. */
const HEAVY_MODULES = [
  '/dist/store/',
  '/dist/ingest/',
  '/dist/api/',
  '/dist/devnet/',
  '/dist/chain/',
  '/dist/cli/commands.js',
  '/node_modules/fastify/',
  '/node_modules/postgres/',
  '/node_modules/@electric-sql/',
  '/node_modules/pino/',
  '/node_modules/@stacks/',
];

/** The heavy modules a run loaded (none for help and usage errors). */
export function heavyModulesLoaded(run: CliRun, allowed: string[] = []): string[] {
  return run.modules.filter(
    (url) => HEAVY_MODULES.some((heavy) => url.includes(heavy)) && !allowed.some((a) => url.includes(a)),
  );
}
