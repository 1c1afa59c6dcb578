import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';

// `npm run test:fast` runs the test files that never reach a database, without starting PostgreSQL: the
// change loop of a newcomer editing the codec, the generator or a pure helper (under a minute, against the
// whole suite's minutes). A file is fast when nothing it imports, directly or through what that imports
// (types aside), is the database handle or the tests' database support; the files that start a database in
// a child process are named here.

const root = resolve(dirname(new URL(import.meta.url).pathname), '..', '..');

/** Modules whose import means a database is opened. */
const DATABASE_MODULES = ['test/support/database.ts', 'test/support/postgres.ts', 'src/store/db.ts'].map(
  (path) => join(root, path),
);

/** Test files that start a database in a child process, out of sight of their imports. */
const DATABASE_IN_CHILD = ['test/support/postgres.test.ts'].map((path) => join(root, path));

const reaches = new Map<string, boolean>();

/** Whether `file` imports, at any depth, one of the database modules (type-only imports aside). */
function reachesDatabase(file: string, visiting = new Set<string>()): boolean {
  if (DATABASE_MODULES.includes(file)) return true;
  const known = reaches.get(file);
  if (known !== undefined) return known;
  if (visiting.has(file)) return false;
  visiting.add(file);
  const text = readFileSync(file, 'utf8');
  let found = false;
  for (const [, specifier] of text.matchAll(
    /^(?!import type)[^\n]*?(?:from|import\()\s*'(\.{1,2}\/[^']+)'/gm,
  )) {
    const imported = resolve(dirname(file), specifier).replace(/\.js$/, '.ts');
    if (existsSync(imported) && reachesDatabase(imported, visiting)) {
      found = true;
      break;
    }
  }
  visiting.delete(file);
  reaches.set(file, found);
  return found;
}

/** Whether the test file (absolute path) runs without any database. */
export function isFastTest(file: string): boolean {
  return !DATABASE_IN_CHILD.includes(file) && !reachesDatabase(file);
}
