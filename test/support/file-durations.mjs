import { relative } from 'node:path';
import { cwd } from 'node:process';

// A test reporter (used by test/run.ts beside the spec reporter) that prints, once the suite is done, how long
// each test file took, slowest first: the place to look when the suite gets slow. A file's time is the sum of
// its top-level suites and tests (they run one after another inside the file; files run two at a time).
// Plain JavaScript: Node loads reporters before tsx's loader is registered.

/** @param {AsyncIterable<{ type: string, data: { nesting?: number, file?: string, details?: { duration_ms?: number } } }>} source */
export default async function* fileDurations(source) {
  /** @type {Map<string, number>} */
  const byFile = new Map();
  for await (const event of source) {
    const { nesting, file, details } = event.data;
    if ((event.type === 'test:pass' || event.type === 'test:fail') && nesting === 0 && file) {
      byFile.set(file, (byFile.get(file) ?? 0) + (details?.duration_ms ?? 0));
    }
  }
  const rows = [...byFile].sort((a, b) => b[1] - a[1]);
  yield `\ntime per test file, slowest first (${rows.length} files):\n`;
  for (const [file, ms] of rows) {
    yield `${(ms / 1000).toFixed(1).padStart(7)} s  ${relative(cwd(), file)}\n`;
  }
}
