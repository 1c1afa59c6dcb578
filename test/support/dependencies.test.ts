import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import semver from 'semver';

// What `npm ci` installs, checked against what the project promises: the Node version of package.json's
// `engines` (and of the README) runs every installed package, so `npm ci` on that version warns of none;
// and every package with an install script is decided in `allowScripts` (run or not), so none is flagged.

const read = (file: string) => readFileSync(new URL(`../../${file}`, import.meta.url), 'utf8');
const manifest = JSON.parse(read('package.json')) as {
  engines: { node: string };
  allowScripts: Record<string, boolean>;
};
interface Locked {
  version?: string;
  engines?: { node?: string } | string[];
  hasInstallScript?: boolean;
}
const locked = Object.entries(
  (JSON.parse(read('package-lock.json')) as { packages: Record<string, Locked> }).packages,
)
  .filter(([path]) => path !== '')
  .map(([path, entry]) => ({ name: path.slice(path.lastIndexOf('node_modules/') + 13), path, ...entry }));

const oldestNode = semver.minVersion(manifest.engines.node)!;

describe('installed packages', () => {
  test(`every package runs on Node ${oldestNode.version}, the oldest package.json accepts`, () => {
    const refusing = locked
      .filter(({ engines }) => !Array.isArray(engines) && engines?.node)
      .filter(({ engines }) => !semver.satisfies(oldestNode, (engines as { node: string }).node))
      .map(({ path, version, engines }) => `${path}@${version} (node ${(engines as { node: string }).node})`);
    assert.deepEqual(refusing, []);
    assert.ok(locked.some(({ name }) => name === 'content-disposition'));
    assert.ok(locked.some(({ name }) => name === 'cookie'));
  });

  test('the README names the same Node version', () => {
    assert.ok(read('README.md').includes(`(Node ${oldestNode.major}.${oldestNode.minor} or later)`));
  });

  test('every package with an install script is allowed or denied it in allowScripts', () => {
    const undecided = locked
      .filter(({ hasInstallScript, name }) => hasInstallScript && !(name in manifest.allowScripts))
      .map(({ path, version }) => `${path}@${version}`);
    assert.deepEqual(undecided, []);
    assert.ok(locked.some(({ name, hasInstallScript }) => name === 'esbuild' && hasInstallScript));
  });
});
