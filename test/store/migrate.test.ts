import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { after, describe, test } from 'node:test';
import type { Database } from '../../src/store/db.js';
import { listMigrations, migrate, pendingMigrations } from '../../src/store/migrate.js';
import { openTestDatabase, stopOwnCluster } from '../support/database.js';
import { testEngines } from '../support/engines.js';

after(stopOwnCluster);

const scratch = await mkdtemp(join(tmpdir(), 'migrate-'));
after(() => rm(scratch, { recursive: true, force: true }));

let dirs = 0;
/** A migrations folder holding `files` (name → SQL). */
async function migrationsFolder(files: Record<string, string>): Promise<URL> {
  const dir = join(scratch, String(dirs++));
  await mkdir(dir);
  for (const [name, sql] of Object.entries(files)) await writeFile(join(dir, name), sql);
  return pathToFileURL(dir + '/');
}

const recorded = async (db: Database) =>
  (await db.sql`SELECT version, name FROM schema_migrations ORDER BY version`).map(
    (r) => `${r.version} ${r.name}`,
  );

describe('the migrations folder', () => {
  test('versions are unique and the files are listed in version order', async () => {
    const files = (await readdir(new URL('../../src/store/migrations/', import.meta.url))).filter((f) =>
      f.endsWith('.sql'),
    );
    const versions = files.map((f) => Number(f.split('_')[0]));
    assert.equal(new Set(versions).size, versions.length);
    const listed = await listMigrations();
    assert.equal(listed.length, files.length);
    assert.equal(listed[0].name, '001_schema');
    assert.deepEqual(
      listed.map((m) => m.version),
      [...versions].sort((a, b) => a - b),
    );
  });

  test('two files with one version are refused, naming both', async () => {
    const dir = await migrationsFolder({
      '001_a.sql': 'SELECT 1',
      '007_b.sql': 'SELECT 1',
      '007_c.sql': 'SELECT 1',
    });
    await assert.rejects(listMigrations(dir), /two migrations share version 7: 007_b\.sql and 007_c\.sql/);
  });

  test('the README names the next free number', async () => {
    const readme = await readFile(new URL('../../src/store/migrations/README.md', import.meta.url), 'utf8');
    const next = Number(/The next number is \*\*(\d{3})\*\*/.exec(readme)?.[1]);
    const highest = Math.max(...(await listMigrations()).map((m) => m.version));
    assert.ok(next > highest, `README's next number ${next} is above the highest in use, ${highest}`);
  });
});

for (const engine of testEngines(import.meta.url)) {
  describe(`migrate (${engine})`, () => {
    test('applies every migration once, recording each; a second run applies nothing', async () => {
      const db = await openTestDatabase(engine);
      try {
        const all = (await listMigrations()).map((m) => m.name);
        assert.deepEqual(await pendingMigrations(db.sql), all);
        assert.deepEqual(await migrate(db.sql), all);
        assert.deepEqual(
          await recorded(db),
          (await listMigrations()).map((m) => `${m.version} ${m.name}`),
        );
        assert.deepEqual(await migrate(db.sql), []);
        assert.deepEqual(await pendingMigrations(db.sql), []);
      } finally {
        await db.close();
      }
    });

    test('each migration in its own transaction: a failing one rolls back alone, those before it stay', async () => {
      const db = await openTestDatabase(engine);
      try {
        const dir = await migrationsFolder({
          '001_one.sql': 'CREATE TABLE one (n int); INSERT INTO one VALUES (1);',
          '002_two.sql': 'CREATE TABLE two (n int); INSERT INTO two VALUES (2);',
          // the table is created, then the division fails: the whole migration must roll back
          '005_broken.sql': 'CREATE TABLE broken (n int); SELECT 1 / 0;',
          '009_after.sql': 'CREATE TABLE after_broken (n int);',
        });
        await assert.rejects(migrate(db.sql, dir), /division by zero/);
        assert.deepEqual(await recorded(db), ['1 001_one', '2 002_two']);
        const [{ one, two, broken }] = await db.sql`SELECT
          (SELECT n FROM one) AS one, (SELECT n FROM two) AS two, to_regclass('broken') IS NULL AS broken`;
        assert.deepEqual({ one, two, broken }, { one: 1, two: 2, broken: true });

        // fixed, the run resumes at the failed migration
        await writeFile(new URL('005_broken.sql', dir), 'CREATE TABLE broken (n int);');
        assert.deepEqual(await migrate(db.sql, dir), ['005_broken', '009_after']);
        assert.deepEqual(await recorded(db), ['1 001_one', '2 002_two', '5 005_broken', '9 009_after']);
      } finally {
        await db.close();
      }
    });

    const oneConnection = engine === 'pglite' && 'PGlite has one connection: two runs cannot overlap';
    test('two runs at once apply each migration once', { skip: oneConnection }, async () => {
      const db = await openTestDatabase(engine);
      try {
        const dir = await migrationsFolder({
          '001_one.sql': 'CREATE TABLE one (n int);',
          '002_two.sql': 'CREATE TABLE two (n int);',
        });
        const [a, b] = await Promise.all([migrate(db.sql, dir), migrate(db.sql, dir)]);
        assert.deepEqual([...a, ...b].sort(), ['001_one', '002_two']);
        assert.deepEqual(await recorded(db), ['1 001_one', '2 002_two']);
      } finally {
        await db.close();
      }
    });
  });
}
