import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { isFastTest } from './fast-tests.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const fast = (path: string) => isFastTest(join(root, path));

describe('npm run test:fast', () => {
  test('takes the files that open no database, and only those', () => {
    // pure code: the codec, the generator's messages, a cache policy
    for (const path of [
      'test/chain/transaction.test.ts',
      'test/devnet/nakamoto.test.ts',
      'test/api/oldest-first.test.ts',
    ]) {
      assert.equal(fast(path), true, path);
    }
    // through the tests' database support, through the store's handle (the API server builds on it), and
    // in a child process
    for (const path of [
      'test/ingest/observer.test.ts',
      'test/api/access-control.test.ts',
      'test/conformance/generated.test.ts',
      'test/support/postgres.test.ts',
    ]) {
      assert.equal(fast(path), false, path);
    }
  });
});
