import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gunzipSync } from 'node:zlib';
import { parseTsvLine, type RecordedMessage } from '../../src/protocol/tsv.js';

// The shared test data: the recorded chains (fixtures/) and the original API's answers to them (golden/), in
// `../shared` beside the checkout, or where SHARED_DIR says. Every path to it is resolved here, and a missing
// path is an error naming it: a test that silently found no fixture would pass having checked nothing.

const checkout = fileURLToPath(new URL('../../', import.meta.url));

/** The absolute path of `parts` inside the shared directory; throws, naming the path, when it is missing. */
function sharedPath(...parts: string[]): string {
  const base = resolve(process.env.SHARED_DIR || join(checkout, '..', 'shared'));
  const path = join(base, ...parts);
  if (!existsSync(path)) {
    throw new Error(
      `shared test data missing: ${path} does not exist. The fixtures and goldens live in ../shared beside ` +
        `the checkout (${base}); set SHARED_DIR to use another directory.`,
    );
  }
  return path;
}

/** The names of the recorded chains (`fixtures/event-replay/<name>.tsv`), sorted; never empty. */
export function fixtureNames(): string[] {
  const dir = sharedPath('fixtures', 'event-replay');
  const names = readdirSync(dir)
    .filter((f) => f.endsWith('.tsv'))
    .map((f) => f.replace(/\.tsv$/, ''))
    .sort();
  if (names.length === 0) throw new Error(`shared test data missing: no .tsv fixture in ${dir}`);
  return names;
}

/** The generated chains the original API answered on (`fixtures/generated/<name>.tsv`, `golden/generated/`). */
export const GENERATED_CHAINS = ['gen-small'] as const;

/**
 * The recorded chain `name` (`fixtures/event-replay/<name>.tsv`), or the generated one `generated/<name>`
 * (`fixtures/generated/<name>.tsv`): the names `loadGolden` takes.
 */
export function fixtureFile(name: string): string {
  const generated = /^generated\/(.+)$/.exec(name);
  if (generated) return generatedFixtureFile(generated[1]);
  return sharedPath('fixtures', 'event-replay', `${name}.tsv`);
}

/** A generated chain of the shared data (`fixtures/generated/<name>.tsv`, e.g. `gen-small`). */
export function generatedFixtureFile(name: string): string {
  return sharedPath('fixtures', 'generated', `${name}.tsv`);
}

/** The messages of a recorded chain, in order (read at once: the fixtures are small). */
export function fixtureMessages(name: string): RecordedMessage[] {
  return readFileSync(fixtureFile(name), 'utf8')
    .split('\n')
    .flatMap((line, i) => (line.length > 0 ? [parseTsvLine(line, i + 1)] : []));
}

/**
 * The goldens of the routes beyond the contract's ten (golden/README.md "Beyond the ten"), as `loadGolden`
 * names: `beyond/<fixture>` for each recorded chain that has one, then `generated/<chain>-beyond`.
 */
export function beyondGoldenNames(): string[] {
  const recorded = readdirSync(sharedPath('golden', 'beyond'))
    .filter((f) => f.endsWith('.jsonl.gz'))
    .map((f) => `beyond/${f.replace(/\.jsonl\.gz$/, '')}`)
    .sort();
  return [...recorded, ...GENERATED_CHAINS.map((name) => `generated/${name}-beyond`)];
}

/** The chain the reference imported each fixture with (golden/README.md; generated chains are mainnet's). */
export function fixtureIsMainnet(name: string): boolean {
  return name.startsWith('mainnet-') || name.startsWith('generated/') || name === 'poisonmicroblock';
}

/** The bodies of the fixture blocks holding burnchain-op txs (real mainnet blocks), by file name. */
export function burnchainOpTxBlocks(): { file: string; body: string }[] {
  const dir = sharedPath('fixtures', 'synthetic-txs');
  return readdirSync(dir)
    .filter((f) => f.endsWith('.json'))
    .sort()
    .map((file) => ({ file, body: readFileSync(join(dir, file), 'utf8') }));
}

/** One answer of the original API (golden/README.md). */
export interface GoldenRecord {
  path: string;
  status: number;
  body: unknown;
  etag: string | null;
}

/** The original API's answers on a fixture (`golden/<name>.jsonl.gz`; `generated/<name>` for generated chains). */
export function loadGolden(name: string): GoldenRecord[] {
  return gunzipSync(readFileSync(sharedPath('golden', `${name}.jsonl.gz`)))
    .toString('utf8')
    .split('\n')
    .filter((line) => line.length > 0)
    .map((line) => JSON.parse(line) as GoldenRecord);
}
