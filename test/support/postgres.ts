import { execFile, execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync, chmodSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

/** A throwaway PostgreSQL cluster on loopback, for tests and benchmarks. */
export interface TestPostgres {
  /** URL of the `postgres` database; use `createDatabase` for isolated ones. */
  url: string;
  port: number;
  dataDir: string;
  createDatabase(name: string): Promise<string>;
  /** Stops the cluster for good and removes its data directory. */
  stop(): Promise<void>;
  /**
   * Stops the server but keeps its data (a database outage): `fast` disconnects clients and shuts down
   * cleanly, `immediate` kills it (crash recovery on the next start). `start()` brings it back.
   */
  halt(mode?: 'fast' | 'immediate'): Promise<void>;
  /** Starts a halted server again, on the same port and data directory. */
  start(): Promise<void>;
}

export function findPostgresBin(name: string): string {
  const candidates = [
    ...(process.env.PG_BIN ? [process.env.PG_BIN] : []),
    ...(existsSync('/usr/lib/postgresql')
      ? readdirSync('/usr/lib/postgresql')
          .sort((a, b) => Number(b) - Number(a))
          .map((v) => `/usr/lib/postgresql/${v}/bin`)
      : []),
    '/usr/local/bin',
    '/usr/bin',
  ];
  for (const dir of candidates) {
    const path = join(dir, name);
    if (existsSync(path)) return path;
  }
  throw new Error(
    `PostgreSQL binary ${name} not found (install the Debian "postgresql" package or set PG_BIN)`,
  );
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });
}

const isRoot = process.getuid?.() === 0;

/** PostgreSQL refuses to run as root: as root, commands run as the `postgres` user. */
function asPostgresUser(cmd: string, args: string[]): [string, string[]] {
  return isRoot ? ['runuser', ['-u', 'postgres', '--', cmd, ...args]] : [cmd, args];
}

export async function startPostgres(
  options: {
    fsync?: boolean;
    /** default off (fast tests); on when a test stops the server with `immediate` and needs what it acknowledged */
    synchronousCommit?: boolean;
  } = {},
): Promise<TestPostgres> {
  const dataDir = mkdtempSync(join(tmpdir(), 'stacks-api-pg-'));
  chmodSync(dataDir, 0o777);
  if (isRoot) execFileSync('chown', ['postgres', dataDir]);
  const port = await freePort();
  const [initCmd, initArgs] = asPostgresUser(findPostgresBin('initdb'), [
    '-D',
    join(dataDir, 'data'),
    '-U',
    'postgres',
    '--auth=trust',
    '--encoding=UTF8',
    '--locale=C',
  ]);
  execFileSync(initCmd, initArgs, { stdio: 'pipe' });
  const settings = [
    'listen_addresses=127.0.0.1',
    `unix_socket_directories=${dataDir}`,
    `fsync=${options.fsync ? 'on' : 'off'}`,
    `synchronous_commit=${options.synchronousCommit ? 'on' : 'off'}`,
    'full_page_writes=off',
    'max_connections=200',
    'shared_buffers=256MB',
  ];
  const pgData = join(dataDir, 'data');
  const pgCtl = findPostgresBin('pg_ctl');
  const run = (args: string[]) => {
    const [cmd, argv] = asPostgresUser(pgCtl, args);
    execFileSync(cmd, argv, { stdio: 'pipe' });
  };
  const options_ = ['-p', String(port), ...settings.flatMap((s) => ['-c', s])].join(' ');
  const startArgs = [
    '-D',
    pgData,
    '-l',
    join(dataDir, 'server.log'),
    '-o',
    options_,
    '-w',
    '-t',
    '60',
    'start',
  ];
  run(startArgs);
  // halt/start do not block the event loop: the process keeps serving (and measuring) meanwhile.
  const runAsync = async (args: string[]) => {
    const [cmd, argv] = asPostgresUser(pgCtl, args);
    await promisify(execFile)(cmd, argv);
  };
  const url = `postgres://postgres@127.0.0.1:${port}/postgres`;

  const { default: postgres } = await import('postgres');
  return {
    url,
    port,
    dataDir,
    async createDatabase(name: string) {
      const admin = postgres(url, { max: 1, onnotice: () => {} });
      try {
        await admin.unsafe(`CREATE DATABASE "${name.replace(/"/g, '')}"`);
      } finally {
        await admin.end();
      }
      return `postgres://postgres@127.0.0.1:${port}/${encodeURIComponent(name)}`;
    },
    async stop() {
      try {
        run(['-D', pgData, '-m', 'immediate', '-w', 'stop']);
      } finally {
        rmSync(dataDir, { recursive: true, force: true });
      }
    },
    async halt(mode = 'fast') {
      await runAsync(['-D', pgData, '-m', mode, '-w', '-t', '60', 'stop']);
    },
    async start() {
      await runAsync(startArgs);
    },
  };
}
