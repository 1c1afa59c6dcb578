import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The folder holding package.json: the checkout, or the installed package. */
const packageRoot = fileURLToPath(new URL('..', import.meta.url));

/** The version in package.json, e.g. `0.1.0`. */
export function packageVersion(): string {
  const pkg = JSON.parse(readFileSync(join(packageRoot, 'package.json'), 'utf8')) as {
    version: string;
  };
  return pkg.version;
}

/**
 * `v<package version> (<branch>:<commit>)`, as the X-API-Version header and /extended show it: the commit
 * of the checkout this runs from (GIT_COMMIT and GIT_BRANCH where it has no .git, e.g. an installed
 * package or a container), never that of whatever repository the working directory is in.
 */
export function serviceVersion(): string {
  const git = (args: string[]) => {
    if (!existsSync(join(packageRoot, '.git'))) return '';
    try {
      return execFileSync('git', args, { cwd: packageRoot, stdio: ['ignore', 'pipe', 'ignore'] })
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
