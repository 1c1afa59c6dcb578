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

// bench/RESULTS.md is a reference written by hand, but for the latest run's section, which `npm run bench`
// replaces between these markers and leaves the rest as it is (test/bench/results-file.test.ts).
export const RUN_SECTION_BEGIN = '<!-- bench:run:begin (written by npm run bench) -->';
export const RUN_SECTION_END = '<!-- bench:run:end -->';

/** `text` (bench/RESULTS.md) with its marked section replaced by `markdown`, or with one appended if it has none. */
export function withRunSection(text: string, markdown: string): string {
  const section = `${RUN_SECTION_BEGIN}\n\n${markdown}\n${RUN_SECTION_END}`;
  const start = text.indexOf(RUN_SECTION_BEGIN);
  const end = text.indexOf(RUN_SECTION_END);
  return start >= 0 && end > start
    ? text.slice(0, start) + section + text.slice(end + RUN_SECTION_END.length)
    : `${text.trimEnd()}\n\n## Latest run\n\n${section}\n`;
}
