import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { listMigrations } from '../../src/store/migrate.js';

// A database on the schema before a migration, for tests that index it there, run the migration and compare
// it with a database indexed after it.

/** A folder (made in `dir`) holding the migrations before `version`: the schema of a database that has not run it yet. */
export async function migrationsBefore(dir: string, version: number): Promise<URL> {
  const folder = join(dir, `before-${version}`);
  rmSync(folder, { recursive: true, force: true });
  mkdirSync(folder);
  for (const m of await listMigrations()) {
    if (m.version < version) writeFileSync(join(folder, `${m.name}.sql`), m.sql);
  }
  return pathToFileURL(folder + '/');
}

/** The names of the migrations from `version` on, in order: what migrating such a database applies. */
export async function migrationsFrom(version: number): Promise<string[]> {
  return (await listMigrations()).filter((m) => m.version >= version).map((m) => m.name);
}
