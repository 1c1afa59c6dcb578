import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

/** The version in package.json, e.g. `0.1.0`. */
export function packageVersion(): string {
  const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as {
    version: string;
  };
  return pkg.version;
}

/** `v<package version> (<branch>:<commit>)`, as the X-API-Version header and /extended show it. */
export function serviceVersion(): string {
  const git = (args: string[]) => {
    try {
      return execFileSync('git', args, { stdio: ['ignore', 'pipe', 'ignore'] })
        .toString()
        .trim();
    } catch {
      return '';
    }
  };
  const commit = process.env.GIT_COMMIT ?? git(['rev-parse', '--short', 'HEAD']);
  const branch = process.env.GIT_BRANCH ?? git(['rev-parse', '--abbrev-ref', 'HEAD']);
  return `v${packageVersion()} (${branch || 'unknown'}:${commit || 'unknown'})`;
}
