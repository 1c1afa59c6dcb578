// Markdown the benchmarks write into the repository: formatted as the repository's Prettier settings say
// (bench/results and bench/RESULTS.md are committed, and `npm run lint` checks them).
import { writeFileSync } from 'node:fs';
import * as prettier from 'prettier';

/** The text as the repository's Prettier settings format it for `file`. */
export async function format(file: string, text: string): Promise<string> {
  const config = (await prettier.resolveConfig(file)) ?? {};
  return prettier.format(text, { ...config, filepath: file });
}

export async function writeFormatted(file: string, text: string) {
  writeFileSync(file, await format(file, text));
}
