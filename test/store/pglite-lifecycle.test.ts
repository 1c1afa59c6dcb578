import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import {
  chmod,
  chown,
  lstat,
  mkdir,
  mkdtemp,
  readdir,
  readFile,
  readlink,
  realpath,
  rm,
  stat,
  symlink,
  writeFile,
} from 'node:fs/promises';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { MessageChannel } from 'node:worker_threads';
import { PGlite } from '@electric-sql/pglite';
import postgres from 'postgres';
import { openDatabase } from '../../src/store/db.js';
import {
  askDirectoryHolder,
  DatabaseAccessError,
  DatabaseInUseError,
  lockDirectory,
} from '../../src/store/directory-lock.js';
import { PgliteSession } from '../../src/store/pglite-wire.js';

// The embedded database's lifecycle: how it is reached, and who may open its directory.

const scratch = await mkdtemp(join(tmpdir(), 'pglite-lifecycle-'));
after(() => rm(scratch, { recursive: true, force: true }));

/** Inodes of the TCP sockets this process is listening on (from /proc: fds that are sockets, in LISTEN state). */
async function listeningTcpInodes(): Promise<Set<string>> {
  const own = new Set<string>();
  for (const fd of await readdir('/proc/self/fd')) {
    const target = await readlink(`/proc/self/fd/${fd}`).catch(() => '');
    const inode = /^socket:\[(\d+)\]$/.exec(target)?.[1];
    if (inode) own.add(inode);
  }
  const listening = new Set<string>();
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    const lines = (await readFile(table, 'utf8').catch(() => '')).split('\n').slice(1);
    for (const line of lines) {
      const fields = line.trim().split(/\s+/);
      // st (4th) 0A = LISTEN; inode is the 10th field
      if (fields[3] === '0A' && own.has(fields[9])) listening.add(fields[9]);
    }
  }
  return listening;
}

/**
 * Runs `fn` with the system temp folder (TMPDIR) pointed at a fresh folder of the test: where a shared
 * temp folder would be, without touching the machine's.
 */
async function withSharedTemp(fn: (shared: string) => Promise<void>): Promise<void> {
  const shared = await mkdtemp(join(scratch, 'shared-tmp-'));
  const saved = process.env.TMPDIR;
  process.env.TMPDIR = shared;
  try {
    await fn(shared);
  } finally {
    if (saved === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = saved;
  }
}

/** Someone else listening at `path`, answering every request as a holder that ran it would. */
async function fakeHolder(path: string): Promise<{ server: Server; asked: number }> {
  const impostor = { server: createServer(), asked: 0 };
  impostor.server.on('connection', (socket) => {
    impostor.asked += 1;
    socket.end(JSON.stringify({ result: 'the impostor' }) + '\n');
  });
  await new Promise<void>((resolve) => impostor.server.listen(path, resolve));
  return impostor;
}

describe('PGlite: no way into the database from outside', () => {
  for (const where of ['memory://', 'directory']) {
    test(`opening PGlite (${where}) listens on no TCP port and opens no database socket`, async () => {
      const dir = where === 'memory://' ? where : join(scratch, 'no-listener');
      const before = await listeningTcpInodes();
      const db = await openDatabase({ url: '', pgliteDir: dir, poolMax: 1 });
      try {
        // the client works (pipelined statements and a transaction), through no socket
        const [[one], [two]] = await Promise.all([db.sql`SELECT 1 AS n`, db.sql`SELECT 2 AS n`]);
        assert.deepEqual([one.n, two.n], [1, 2]);
        await db.sql.begin(async (tx) => {
          await tx`CREATE TABLE probe (a int)`;
          await tx`INSERT INTO probe VALUES (7)`;
        });
        const [row] = await db.sql`SELECT a FROM probe`;
        assert.equal(row.a, 7);
        const opened = [...(await listeningTcpInodes())].filter((inode) => !before.has(inode));
        assert.deepEqual(opened, [], 'a TCP listener was opened');
        if (dir !== 'memory://') {
          // the one socket is the directory's private control socket (see below), no database socket
          const sockets = (await readdir(dir, { recursive: true, withFileTypes: true })).filter((e) =>
            e.isSocket(),
          );
          assert.deepEqual(
            sockets.map((e) => join(e.parentPath, e.name)),
            [join(dir, '.control', 'control.sock')],
          );
        }
      } finally {
        await db.close();
      }
    });
  }

  test('a connection that drops inside a transaction leaves no transaction open', async () => {
    const pglite = await PGlite.create();
    const session = new PgliteSession(pglite);
    const client = () =>
      postgres({ max: 1, onnotice: () => {}, ...({ socket: () => session.connect() } as object) });
    try {
      const first = client();
      await first`CREATE TABLE t (a int)`;
      const reserved = await first.reserve();
      await reserved`BEGIN`;
      await reserved`INSERT INTO t VALUES (1)`;
      // the client goes away mid-transaction: its connection is destroyed
      await first.end({ timeout: 0 });
      const second = client();
      const [row] = await second`SELECT count(*)::int AS n FROM t`;
      assert.equal(row.n, 0);
      assert.equal(pglite.isInTransaction(), false);
      await second.end();
    } finally {
      await pglite.close();
    }
  });
});

describe('PGlite: connections from another thread share the one session', () => {
  test('a read from another connection waits for an open transaction, never runs inside it', async () => {
    // The ingest thread's connection reaches the session over a port (serve.ts); a MessageChannel in this
    // thread stands for it. The API's reads come on a connection of this thread.
    const db = await openDatabase({ url: '', pgliteDir: 'memory://', poolMax: 1 });
    const { port1, port2 } = new MessageChannel();
    db.serveOverPort!(port1);
    const ingest = await openDatabase({ url: '', pgliteDir: '', poolMax: 1, pglitePort: port2 });
    try {
      await db.sql`CREATE TABLE t (a int)`;
      let readAnswered = false;
      let read: Promise<number> | undefined;
      await ingest.sql.begin(async (tx) => {
        await tx`INSERT INTO t VALUES (1)`;
        read = db.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM t`.then(([row]) => {
          readAnswered = true;
          return row.n;
        });
        // the read does not run inside this transaction: it is still waiting while the transaction is open
        await new Promise((resolve) => setTimeout(resolve, 200));
        assert.equal(readAnswered, false);
        await tx`INSERT INTO t VALUES (2)`;
      });
      assert.equal(await read, 2);
      // a transaction rolled back by the other thread's connection leaves nothing, and the session free
      await assert.rejects(
        ingest.sql.begin(async (tx) => {
          await tx`INSERT INTO t VALUES (3)`;
          throw new Error('refused');
        }),
        /refused/,
      );
      const [row] = await db.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM t`;
      assert.equal(row.n, 2);
    } finally {
      await ingest.close();
      await db.close();
    }
  });
});

describe('PGlite: one process per directory', () => {
  test('a second opener is refused, naming the directory and the holder; the directory is free after close', async () => {
    const dir = join(scratch, 'one-holder');
    const db = await openDatabase({ url: '', pgliteDir: dir, poolMax: 1 });
    try {
      const refused = await openDatabase({ url: '', pgliteDir: dir, poolMax: 1 }).then(
        () => assert.fail('opened twice'),
        (err: unknown) => err,
      );
      assert.ok(refused instanceof DatabaseInUseError);
      assert.equal(refused.directory, dir);
      assert.equal(refused.holder?.pid, process.pid);
      assert.match(refused.holder?.command ?? '', /pglite-lifecycle\.test\.ts/);
      assert.match(
        refused.message,
        new RegExp(
          `^the database directory ${dir} is in use by process ${process.pid} \\(.*pglite-lifecycle\\.test\\.ts.*, since \\d{4}-\\d\\d-\\d\\dT[^)]+\\): one process at a time may open it; stop that process first, or set PGLITE_DIR to another directory$`,
        ),
      );
      // the socket and its folder are private to this user
      assert.equal((await stat(join(dir, '.control'))).mode & 0o777, 0o700);
      assert.equal((await stat(join(dir, '.control', 'control.sock'))).mode & 0o777, 0o600);
      await db.sql`CREATE TABLE kept (a int)`;
      await db.sql`INSERT INTO kept VALUES (1)`;
    } finally {
      await db.close();
    }
    const again = await openDatabase({ url: '', pgliteDir: dir, poolMax: 1 });
    try {
      const [row] = await again.sql`SELECT count(*)::int AS n FROM kept`;
      assert.equal(row.n, 1);
    } finally {
      await again.close();
    }
  });

  test('the socket left by a holder that died is taken over (also when the path is too long for a socket)', async () => {
    for (const dir of [join(scratch, 'dead-holder'), join(scratch, 'a-long-dead-holder-name-'.repeat(5))]) {
      await mkdir(join(dir, '.control'), { recursive: true, mode: 0o700 });
      // what a killed holder leaves: its socket file, with nobody listening, and its note (the socket is
      // bound through the folder's descriptor, a name short enough for any path)
      const killed = spawn(
        process.execPath,
        [
          '-e',
          "const fd = require('fs').openSync(process.argv[1], 'r'); require('net').createServer()" +
            ".listen(`/proc/self/fd/${fd}/control.sock`, () => process.kill(process.pid, 'SIGKILL'))",
          join(dir, '.control'),
        ],
        { stdio: 'ignore' },
      );
      assert.deepEqual(await once(killed, 'exit'), [null, 'SIGKILL']);
      assert.ok((await stat(join(dir, '.control', 'control.sock'))).isSocket());
      await writeFile(join(dir, '.control', 'holder.json'), '{"pid":999999,"command":"gone","since":"x"}');
      const lock = await lockDirectory(dir);
      try {
        const holder = JSON.parse(await readFile(join(dir, '.control', 'holder.json'), 'utf8'));
        assert.equal(holder.pid, process.pid);
        lock.serve(async () => 'taken over');
        assert.equal(await askDirectoryHolder(dir, {}), 'taken over');
      } finally {
        await lock.release();
      }
      // released: the socket file is gone with its holder
      await assert.rejects(stat(join(dir, '.control', 'control.sock')), { code: 'ENOENT' });
    }
  });

  test('requests reach the holder through its socket (also when the directory path is too long for one)', async () => {
    for (const dir of [join(scratch, 'asked'), join(scratch, 'a-very-long-directory-name-'.repeat(5))]) {
      const lock = await lockDirectory(dir);
      try {
        await assert.rejects(
          askDirectoryHolder(dir, { n: 1 }),
          /the process holding the database is starting: try again/,
        );
        lock.serve(async (request) => {
          const { n } = request as { n: number };
          if (n < 0) throw new Error('negative');
          return { doubled: n * 2 };
        });
        assert.deepEqual(await askDirectoryHolder(dir, { n: 21 }), { doubled: 42 });
        await assert.rejects(askDirectoryHolder(dir, { n: -1 }), /^Error: negative$/);
        await assert.rejects(lockDirectory(dir), DatabaseInUseError);
      } finally {
        await lock.release();
      }
      await assert.rejects(askDirectoryHolder(dir, { n: 1 }), /cannot reach the process holding/);
    }
  });

  test('one directory under several spellings (a link, "..", a path too long for a socket) has one holder', async () => {
    const dir = join(scratch, 'spelled');
    await mkdir(dir);
    // spellings too long for a Unix socket address once ".control/control.sock" is added (sun_path: 108 bytes)
    const longName = 'another-name-for-the-same-directory-'.repeat(3);
    const viaLink = join(scratch, longName);
    await symlink(dir, viaLink);
    await mkdir(join(scratch, `${longName}-real`));
    const viaDots = `${scratch}/${longName}-real/../spelled`;
    await withSharedTemp(async () => {
      for (const [held, asked] of [
        [dir, viaLink],
        [dir, viaDots],
        [viaLink, dir],
        [viaDots, viaLink],
      ]) {
        const lock = await lockDirectory(held);
        try {
          const refused = await lockDirectory(asked).then(
            (second) => second.release().then(() => assert.fail(`${asked} was taken while ${held} was held`)),
            (err: unknown) => err,
          );
          assert.ok(refused instanceof DatabaseInUseError, String(refused));
          assert.equal(refused.directory, asked);
          assert.equal(refused.holder?.pid, process.pid);
          // and a request sent under the other spelling reaches the holder
          lock.serve(async () => ({ heldAs: held }));
          assert.deepEqual(await askDirectoryHolder(asked, {}), { heldAs: held });
        } finally {
          await lock.release();
        }
      }
    });
  });

  test('a path too long for a socket: the socket stays in the directory, whatever waits in the temp folder', async () => {
    const dir = join(scratch, 'a-very-long-directory-name-'.repeat(4));
    const lockedAt = join(dir, '.control', 'control.sock');
    assert.ok(Buffer.byteLength(lockedAt) > 108, 'the socket path is too long for a socket address');
    await withSharedTemp(async (shared) => {
      // another user made the temp folder a link to a folder of their choosing
      const decoy = join(scratch, 'decoy');
      await mkdir(decoy, { mode: 0o755 });
      await chmod(decoy, 0o755);
      const sharedFolder = join(shared, `stacks-read-api-${process.getuid!()}`);
      await symlink(decoy, sharedFolder);
      const lock = await lockDirectory(dir);
      try {
        lock.serve(async () => 'the holder');
        assert.equal(await askDirectoryHolder(dir, {}), 'the holder');
        assert.ok((await lstat(lockedAt)).isSocket());
      } finally {
        await lock.release();
      }
      // the link was not followed: its target keeps its mode and holds nothing
      assert.equal((await stat(decoy)).mode & 0o777, 0o755);
      assert.deepEqual(await readdir(decoy), []);
      assert.ok((await lstat(sharedFolder)).isSymbolicLink());

      // or made the folder open to all, and listens where the directory's socket would be named there:
      // it is neither taken for the holder nor asked anything
      await rm(sharedFolder);
      await mkdir(sharedFolder, { mode: 0o777 });
      await chmod(sharedFolder, 0o777);
      const named = createHash('sha256')
        .update(await realpath(dir))
        .digest('hex')
        .slice(0, 24);
      const impostor = await fakeHolder(join(sharedFolder, `${named}.sock`));
      try {
        const held = await lockDirectory(dir);
        try {
          held.serve(async () => 'the holder');
          assert.equal(await askDirectoryHolder(dir, {}), 'the holder');
        } finally {
          await held.release();
        }
        assert.equal(impostor.asked, 0);
        assert.equal((await stat(sharedFolder)).mode & 0o777, 0o777);
      } finally {
        await new Promise((resolve) => impostor.server.close(resolve));
      }
    });
  });

  test('the control folder must be a private folder of this user: a link, another owner, an open mode are refused', async () => {
    // Checked on the folder itself (owner, mode, link), not by trying to write: root, which runs the suite
    // here, is allowed to write anywhere.
    const decoy = join(scratch, 'control-decoy');
    await mkdir(decoy, { mode: 0o755 });
    await chmod(decoy, 0o755);
    const linked = join(scratch, 'control-linked');
    await mkdir(linked);
    await symlink(decoy, join(linked, '.control'));
    await assert.rejects(lockDirectory(linked), (err: unknown) => {
      assert.ok(err instanceof DatabaseAccessError);
      assert.equal(
        err.message,
        `${linked}/.control is not a folder (a symbolic link, or a file): the control folder of a database ` +
          'directory must be a private folder of the user running the service; remove it',
      );
      return true;
    });
    assert.equal((await stat(decoy)).mode & 0o777, 0o755);
    assert.deepEqual(await readdir(decoy), []);

    // open to all, with someone listening in it: not taken, and not asked
    const open = join(scratch, 'control-open');
    await mkdir(join(open, '.control'), { recursive: true });
    await chmod(join(open, '.control'), 0o777);
    const impostor = await fakeHolder(join(open, '.control', 'control.sock'));
    try {
      const refusal =
        `${open}/.control is open to other users (mode 0777): the control folder of a database directory ` +
        'must be private (mode 0700); chmod 700 it, or remove it';
      await assert.rejects(lockDirectory(open), { message: refusal });
      await assert.rejects(askDirectoryHolder(open, {}), { message: refusal });
      assert.equal(impostor.asked, 0);
      assert.equal((await stat(join(open, '.control'))).mode & 0o777, 0o777);
    } finally {
      await new Promise((resolve) => impostor.server.close(resolve));
    }

    // another user's folder (only root can make one to test with)
    if (process.getuid!() === 0) {
      const foreign = join(scratch, 'control-foreign');
      await mkdir(join(foreign, '.control'), { recursive: true, mode: 0o700 });
      await chown(join(foreign, '.control'), 65534, 65534);
      await assert.rejects(lockDirectory(foreign), {
        message:
          `${foreign}/.control belongs to user 65534, not to the user running the service (0): the control ` +
          'folder of a database directory must be private to that user; remove it, or run as its owner',
      });
      assert.equal((await stat(join(foreign, '.control'))).uid, 65534);
    }
  });

  test('a directory PGlite cannot open is reported as damaged, with its path and how to start over', async () => {
    const dir = join(scratch, 'damaged');
    const db = await openDatabase({ url: '', pgliteDir: dir, poolMax: 1 });
    await db.sql`CREATE TABLE t (a int)`;
    await db.close();
    // what two writers on one directory left behind: no valid checkpoint record in the WAL
    for (const name of await readdir(join(dir, 'pg_wal'))) {
      const file = join(dir, 'pg_wal', name);
      const info = await stat(file);
      if (info.isFile()) await writeFile(file, Buffer.alloc(info.size));
    }
    const err = await openDatabase({ url: '', pgliteDir: dir, poolMax: 1 }).then(
      () => assert.fail('opened a damaged directory'),
      (e: unknown) => e as Error,
    );
    assert.ok(err instanceof DatabaseAccessError);
    assert.equal(
      err.message,
      `the PGlite database in ${dir} cannot be opened (PGlite aborted): it is damaged, or was written by an ` +
        `incompatible PGlite version. To start over with an empty database, move it aside (mv ${dir} ` +
        `${dir}.damaged) or delete it; the chain is indexed again from the node's events or a replay (API ` +
        `keys must be created again)`,
    );
    // the failed open gave the directory up
    const lock = await lockDirectory(dir);
    await lock.release();
  });
});
