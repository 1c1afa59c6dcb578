import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import assert from 'node:assert/strict';
import type { RecordedMessage } from '../../src/protocol/tsv.js';
import type { Engine, Sql } from '../../src/store/db.js';
import { listMigrations, migrate } from '../../src/store/migrate.js';
import { Store } from '../../src/store/store.js';
import { openTestDatabase, openTestStore } from './database.js';
import { ingestMessages } from './delivery.js';
import { databaseDigest, READ_TABLES } from './digest.js';

// A database on the schema without a migration, for tests that index it there, run the migration and compare
// it with a database indexed after it. Without that one migration only (the ones after it applied): the
// database is indexed by this code, which writes the tables of every later migration.

/** A folder (made in `dir`) holding every migration but `version`: the schema of a database that has not run it. */
async function migrationsWithout(dir: string, version: number): Promise<URL> {
  const folder = join(dir, `without-${version}`);
  rmSync(folder, { recursive: true, force: true });
  mkdirSync(folder);
  for (const m of await listMigrations()) {
    if (m.version !== version) writeFileSync(join(folder, `${m.name}.sql`), m.sql);
  }
  return pathToFileURL(folder + '/');
}

/** The name of migration `version`: what migrating such a database applies. */
async function migrationName(version: number): Promise<string[]> {
  return (await listMigrations()).filter((m) => m.version === version).map((m) => m.name);
}

/**
 * A migration's equivalence, asserted: `messages` indexed on a database without `version` (then migrated: it
 * runs) and on a fresh one end in equal tables, and the migrated database goes on
 * indexing as the fresh one (the chain sent again changes nothing). `beforeMigration` checks the old
 * schema; `migrated` the migration's own result, given both databases once indexed.
 */
export async function assertMigrationEquivalent(options: {
  engine: Engine;
  version: number;
  dir: string;
  messages: RecordedMessage[];
  beforeMigration?: (old: Sql) => Promise<void>;
  migrated: (old: Sql, fresh: Sql) => Promise<void>;
}): Promise<void> {
  const { engine, version, dir, messages } = options;
  const old = await openTestDatabase(engine);
  const fresh = await openTestStore(engine);
  try {
    await migrate(old.sql, await migrationsWithout(dir, version));
    const oldStore = new Store(old);
    await options.beforeMigration?.(old.sql);
    await ingestMessages(oldStore, messages);
    assert.deepEqual(await migrate(old.sql), await migrationName(version));
    await ingestMessages(fresh, messages);
    await options.migrated(old.sql, fresh.sql);
    const oldDigest = await databaseDigest(old.sql, READ_TABLES);
    const freshDigest = await databaseDigest(fresh.sql, READ_TABLES);
    for (const table of READ_TABLES) assert.equal(oldDigest[table], freshDigest[table], table);
    // a migrated database goes on indexing as a fresh one: the chain sent again changes nothing
    await ingestMessages(oldStore, messages);
    assert.deepEqual(await databaseDigest(old.sql, READ_TABLES), freshDigest);
  } finally {
    await old.close();
    await fresh.close();
  }
}
