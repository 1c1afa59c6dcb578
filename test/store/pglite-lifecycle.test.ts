import assert from 'node:assert/strict';
import { mkdtemp, readdir, readFile, readlink, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { PGlite } from '@electric-sql/pglite';
import postgres from 'postgres';
import { openDatabase } from '../../src/store/db.js';
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

describe('PGlite: no door to the database', () => {
  for (const where of ['memory://', 'directory']) {
    test(`opening PGlite (${where}) listens on no TCP port and leaves no socket file`, async () => {
      const dir = where === 'memory://' ? where : join(scratch, 'no-door');
      const before = await listeningTcpInodes();
      const db = await openDatabase({ url: '', pgliteDir: dir, poolMax: 1 });
      try {
        // the client works (pipelined statements and a transaction), through no socket
        const [[one], [two]] = await Promise.all([db.sql`SELECT 1 AS n`, db.sql`SELECT 2 AS n`]);
        assert.deepEqual([one.n, two.n], [1, 2]);
        await db.sql.begin(async (tx) => {
          await tx`CREATE TABLE door (a int)`;
          await tx`INSERT INTO door VALUES (7)`;
        });
        const [row] = await db.sql`SELECT a FROM door`;
        assert.equal(row.a, 7);
        const opened = [...(await listeningTcpInodes())].filter((inode) => !before.has(inode));
        assert.deepEqual(opened, [], 'a TCP listener was opened');
        if (dir !== 'memory://') {
          const sockets = (await readdir(dir, { recursive: true, withFileTypes: true })).filter((e) =>
            e.isSocket(),
          );
          assert.deepEqual(
            sockets.map((e) => e.name),
            [],
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
