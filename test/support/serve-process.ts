import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { compiledMain } from './compiled.js';
import { serveEnv } from './serve-config.js';

// The real service in a child process (`serve` of the compiled CLI, support/compiled.ts; both servers), for
// tests that kill it, restart it, or load it from outside: the process a stacks-node and clients would talk to.

const root = fileURLToPath(new URL('../../', import.meta.url));

export interface ServeOptions {
  databaseUrl: string;
  apiPort: number;
  observerPort: number;
  /** more environment (e.g. TEST_PAUSE_BEFORE_COMMIT_MS) */
  env?: Record<string, string>;
  /** how long the start may take (default 120 s: a loaded 2-core machine creates a PGlite database slowly) */
  startTimeoutMs?: number;
  /** `serve --read-only` (API alone) or `serve --write-only` (observer alone); both servers by default */
  mode?: 'read-only' | 'write-only';
  /** node flags before the script (a benchmark's `--cpu-prof --cpu-prof-dir=...`) */
  nodeFlags?: string[];
  /** the process's open-file limit (soft and hard), when not the one this process has */
  fileLimit?: number;
}

interface LogLine {
  level: number;
  msg: string;
  [key: string]: unknown;
}

export interface ServeProcess {
  readonly pid: number;
  readonly child: ChildProcess;
  /** the JSON log lines written so far */
  readonly logs: LogLine[];
  /** resolves with the exit code or signal once the process is gone */
  readonly exited: Promise<string>;
  /** resident set size, from /proc (bytes) */
  rss(): number;
  /** the last 4,000 characters written to stderr */
  stderr(): string;
  /** resolves with the first log line (already written or to come) that matches */
  waitForLog(match: (line: LogLine) => boolean, timeoutMs?: number): Promise<LogLine>;
  kill(signal: NodeJS.Signals): Promise<string>;
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function answers(url: string): Promise<boolean> {
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(2_000) });
    await res.arrayBuffer();
    return res.status < 500;
  } catch {
    return false;
  }
}

/** Starts `serve` and resolves once its servers (both, unless `mode` says one) answer. */
export async function startServe(options: ServeOptions): Promise<ServeProcess> {
  const modeArgs = options.mode ? [`--${options.mode}`] : [];
  const args = [...(options.nodeFlags ?? []), compiledMain(), 'serve', ...modeArgs];
  // `ulimit -n` in a shell that then becomes node (same pid): Node raises its soft limit to the hard one at start
  const [command, commandArgs] =
    options.fileLimit === undefined
      ? [process.execPath, args]
      : [
          '/bin/sh',
          ['-c', 'ulimit -n "$0" && exec "$@"', String(options.fileLimit), process.execPath, ...args],
        ];
  const child = spawn(command, commandArgs, {
    cwd: root,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: {
      ...process.env,
      ...serveEnv({
        DATABASE_URL: options.databaseUrl,
        API_PORT: String(options.apiPort),
        OBSERVER_PORT: String(options.observerPort),
        LOG_LEVEL: 'info',
        ...options.env,
      }),
    },
  });
  const logs: LogLine[] = [];
  const waiters: { match: (l: LogLine) => boolean; resolve: (l: LogLine) => void }[] = [];
  let pending = '';
  child.stdout!.setEncoding('utf8');
  child.stdout!.on('data', (chunk: string) => {
    pending += chunk;
    let nl;
    while ((nl = pending.indexOf('\n')) >= 0) {
      const text = pending.slice(0, nl);
      pending = pending.slice(nl + 1);
      let line: LogLine;
      try {
        line = JSON.parse(text) as LogLine;
      } catch {
        line = { level: 30, msg: text };
      }
      logs.push(line);
      for (const w of [...waiters]) {
        if (w.match(line)) {
          waiters.splice(waiters.indexOf(w), 1);
          w.resolve(line);
        }
      }
    }
  });
  let stderr = '';
  child.stderr!.setEncoding('utf8');
  child.stderr!.on('data', (chunk: string) => (stderr = (stderr + chunk).slice(-4000)));
  const exited = new Promise<string>((resolve) =>
    child.on('exit', (code, signal) => resolve(signal ?? `exit ${code}`)),
  );
  let gone: string | undefined;
  void exited.then((how) => (gone = how));

  const service: ServeProcess = {
    pid: child.pid!,
    child,
    logs,
    exited,
    stderr: () => stderr,
    rss() {
      const status = readFileSync(`/proc/${child.pid}/status`, 'utf8');
      return Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1] ?? 0) * 1024;
    },
    waitForLog(match, timeoutMs = 60_000) {
      const found = logs.find(match);
      if (found) return Promise.resolve(found);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error('log line not seen in time')), timeoutMs);
        waiters.push({
          match,
          resolve: (l) => {
            clearTimeout(timer);
            resolve(l);
          },
        });
      });
    },
    async kill(signal) {
      if (gone === undefined) child.kill(signal);
      return exited;
    },
  };

  const deadline = Date.now() + (options.startTimeoutMs ?? 120_000);
  for (;;) {
    if (gone !== undefined) throw new Error(`serve exited during start-up (${gone}): ${stderr}`);
    if (
      (options.mode === 'read-only' || (await answers(`http://127.0.0.1:${options.observerPort}/`))) &&
      (options.mode === 'write-only' ||
        (await answers(`http://127.0.0.1:${options.apiPort}/extended/v2/blocks/latest`)))
    ) {
      return service;
    }
    if (Date.now() > deadline) {
      await service.kill('SIGKILL');
      throw new Error(`serve did not answer within ${options.startTimeoutMs ?? 120_000} ms: ${stderr}`);
    }
    await sleep(100);
  }
}
