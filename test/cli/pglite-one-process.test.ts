import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, readdir, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { openDatabase } from '../../src/store/db.js';
import { DatabaseInUseError } from '../../src/store/directory-lock.js';
import { compiledMain } from '../support/compiled.js';
import { freePort } from '../support/postgres.js';
import { serveEnv } from '../support/serve-config.js';
import { sleep, startServe, type ServeProcess } from '../support/serve-process.js';

// One process per embedded database directory, with real processes: `serve` on a PGlite directory, and
// the CLI beside it as a user would run it. Before, the CLI opened the directory too: a revoked key kept
// answering, a created one was refused, and the directory ended up damaged.

const root = fileURLToPath(new URL('../..', import.meta.url));
const scratch = await mkdtemp(join(tmpdir(), 'pglite-one-process-'));
const dir = join(scratch, 'data');
// The same directory under a longer name (through a link), too long for a Unix socket address.
const spelled = join(scratch, 'the-same-data-directory-under-a-longer-name-'.repeat(2));
// The system temp folder of the processes run here: where a shared folder would go, not the machine's.
const temp = join(scratch, 'tmp');
let server: ServeProcess | undefined;

after(async () => {
  await server?.kill('SIGKILL');
  await rm(scratch, { recursive: true, force: true });
});

interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** The CLI (`npm run cli -- <args>`) on the PGlite directory, as a user would run it beside the server. */
function cli(args: string[], env: Record<string, string> = {}): Promise<CliRun> {
  const child = spawn(process.execPath, [compiledMain(), ...args], {
    cwd: root,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: {
      ...process.env,
      DATABASE_URL: '',
      PGLITE_DIR: dir,
      LOG_LEVEL: 'warn',
      METRICS_ENABLED: 'false',
      VESTING_FILE: '',
      TMPDIR: temp,
      ...env,
    },
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise((resolve) => child.on('exit', (code) => resolve({ code, stdout, stderr })));
}

async function status(apiPort: number, key: string): Promise<number> {
  const res = await fetch(`http://127.0.0.1:${apiPort}/extended`, { headers: { 'x-api-key': key } });
  await res.arrayBuffer();
  return res.status;
}

describe('PGlite: one process per directory, keys through the running server', () => {
  test('a second process is refused with one line; keys created and revoked from the CLI act on the server', async () => {
    const apiPort = await freePort();
    await mkdir(temp);
    server = await startServe({
      databaseUrl: '',
      apiPort,
      observerPort: await freePort(),
      env: { PGLITE_DIR: dir, TMPDIR: temp },
    });
    const pid = server.pid;
    const holderOf = (spelling: string) =>
      new RegExp(
        `^error: the database directory ${spelling} is in use by process ${pid} \\(main\\.js serve, since [^)]+\\): ` +
          'one process at a time may open it; stop that process first, or set PGLITE_DIR to another directory\\n$',
      );
    const holder = holderOf(dir);

    // a second server, and a command that writes, are refused: exit 2, one line, no stack
    const second = await cli(
      ['serve'],
      serveEnv({ API_PORT: String(await freePort()), OBSERVER_PORT: String(await freePort()) }),
    );
    assert.equal(second.code, 2);
    assert.match(second.stderr, holder);
    const migrate = await cli(['migrate']);
    assert.equal(migrate.code, 2);
    assert.match(migrate.stderr, holder);
    // and this process too
    await assert.rejects(
      openDatabase({ url: '', pgliteDir: dir, poolMax: 1 }),
      (err: unknown) => err instanceof DatabaseInUseError && err.holder?.pid === server?.pid,
    );

    // and under another spelling of the directory, whose socket path is too long for a socket address
    await symlink(dir, spelled);
    const elsewhere = await cli(['migrate'], { PGLITE_DIR: spelled });
    assert.equal(elsewhere.code, 2);
    assert.match(elsewhere.stderr, holderOf(spelled));

    // keys go through the server, under either spelling: a created key works at once
    const created = await cli(['keys', 'create', '--label', 'beside the server'], { PGLITE_DIR: spelled });
    assert.equal(created.code, 0, created.stderr);
    const key = created.stdout.trim();
    const id = /^sk_([0-9a-f]{12})_/.exec(key)?.[1];
    assert.ok(id, `a key on stdout: ${created.stdout}`);
    assert.match(created.stderr, new RegExp(`API key ${id} created for "beside the server"`));
    assert.equal(await status(apiPort, key), 200);
    const listed = await cli(['keys', 'list']);
    assert.equal(listed.code, 0);
    assert.match(listed.stdout, new RegExp(`^${id}  beside the server  \\S+  \\S+  -$`, 'm'));

    // a revoked key is refused within the key cache period (30 s): through the server, from the next request
    const revoked = await cli(['keys', 'revoke', id]);
    assert.equal(revoked.code, 0);
    assert.equal(revoked.stderr, `API key ${id} revoked\n`);
    const deadline = Date.now() + 30_000;
    let answer = await status(apiPort, key);
    while (answer !== 403 && Date.now() < deadline) {
      await sleep(500);
      answer = await status(apiPort, key);
    }
    assert.equal(answer, 403);
    assert.equal((await cli(['keys', 'revoke', 'ffffffffffff'])).code, 1);

    // the server dies without a word: its directory is taken over, and the revocation was kept
    await server.kill('SIGKILL');
    const db = await openDatabase({ url: '', pgliteDir: dir, poolMax: 1 });
    try {
      const rows = await db.sql<{ id: string; label: string; revoked: boolean }[]>`
        SELECT id, label, revoked_at IS NOT NULL AS revoked FROM api_keys`;
      assert.deepEqual(
        rows.map((r) => ({ ...r })),
        [{ id, label: 'beside the server', revoked: true }],
      );
    } finally {
      await db.close();
    }

    // a directory PGlite cannot open (its WAL lost): one line saying so and how to start over, no stack
    for (const name of await readdir(join(dir, 'pg_wal'))) {
      const file = join(dir, 'pg_wal', name);
      const info = await stat(file);
      if (info.isFile()) await writeFile(file, Buffer.alloc(info.size));
    }
    const damaged = await cli(['migrate']);
    assert.equal(damaged.code, 2);
    assert.equal(
      damaged.stderr,
      `error: the PGlite database in ${dir} cannot be opened (PGlite aborted): it is damaged, or was written ` +
        `by an incompatible PGlite version. To start over with an empty database, move it aside (mv ${dir} ` +
        `${dir}.damaged) or delete it; the chain is indexed again from the node's events or a replay (API keys ` +
        `must be created again)\n`,
    );
  });
});
