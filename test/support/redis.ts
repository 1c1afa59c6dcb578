import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { freePort } from './postgres.js';

/** A throwaway Redis on loopback (Debian's `redis-server`), for tests. No persistence. */
export interface TestRedis {
  url: string;
  port: number;
  /** Stops the server (a later `start()` brings it back on the same port, empty). */
  stop(): Promise<void>;
  start(): Promise<void>;
  /** Stops it for good and removes its directory. */
  destroy(): Promise<void>;
}

function findRedisServer(): string | undefined {
  const dirs = [...(process.env.PATH ?? '').split(delimiter), '/usr/bin', '/usr/local/bin', '/usr/sbin'];
  return dirs
    .map((dir) => join(dir, 'redis-server'))
    .find((path) => path.startsWith('/') && existsSync(path));
}

const redisServer = findRedisServer();

/**
 * Why the tests that need a Redis server skip, or false when they run: the harness does not install
 * system packages (.ci/run installs Debian's redis-server, so in CI they always run).
 */
export const redisSkipReason: string | false = redisServer
  ? false
  : 'redis-server not found: install the Debian "redis-server" package (.ci/run does) to run the Redis tests';

/** Resolves once the server answers PING, rejects after `timeoutMs`. */
async function waitForPong(port: number, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const ok = await new Promise<boolean>((resolve) => {
      const socket = connect({ host: '127.0.0.1', port });
      socket.setTimeout(500);
      socket.on('connect', () => socket.write('PING\r\n'));
      socket.on('data', (data) => {
        socket.destroy();
        resolve(data.toString().startsWith('+PONG'));
      });
      socket.on('error', () => resolve(false));
      socket.on('timeout', () => {
        socket.destroy();
        resolve(false);
      });
    });
    if (ok) return;
    if (Date.now() > deadline)
      throw new Error(`redis-server on port ${port} did not answer within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

export async function startRedis(): Promise<TestRedis> {
  const binary = redisServer;
  if (!binary) throw new Error(redisSkipReason as string);
  const dir = mkdtempSync(join(tmpdir(), 'stacks-api-redis-'));
  const port = await freePort();
  let child: ChildProcess | undefined;
  let output = '';
  const killOnExit = () => child?.kill('SIGKILL');
  process.on('exit', killOnExit);

  const start = async () => {
    output = '';
    const proc = spawn(
      binary,
      ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    child = proc;
    proc.stdout.on('data', (d: Buffer) => (output += d.toString()));
    proc.stderr.on('data', (d: Buffer) => (output += d.toString()));
    const exited = new Promise<never>((_, reject) =>
      proc.once('exit', (code) => reject(new Error(`redis-server exited (${code}): ${output.slice(-2000)}`))),
    );
    exited.catch(() => {});
    await Promise.race([waitForPong(port, 10_000), exited]);
  };

  const stop = async () => {
    const proc = child;
    child = undefined;
    if (!proc || proc.exitCode !== null) return;
    const exited = new Promise((resolve) => proc.once('exit', resolve));
    proc.kill('SIGTERM');
    await exited;
  };

  await start();
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    start,
    stop,
    async destroy() {
      await stop();
      process.off('exit', killOnExit);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
