import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { GENERATED_CASE, PGLITE_SMOKE } from './engines.js';
import { fixtureNames } from './shared.js';

// A smoke entry naming a file or fixture that was renamed would silently drop PGlite's coverage.

describe('the PGlite smoke subset', () => {
  test('names test files and fixtures that exist', () => {
    const fixtures = fixtureNames();
    for (const [file, smoke] of Object.entries(PGLITE_SMOKE)) {
      assert.ok(existsSync(fileURLToPath(new URL(`../../${file}`, import.meta.url))), file);
      for (const name of smoke.only ?? []) {
        assert.ok(fixtures.includes(name) || name === GENERATED_CASE, `${file}: ${name}`);
      }
    }
    assert.ok(Object.keys(PGLITE_SMOKE).length >= 3);
  });
});
