import { relative } from 'node:path';
import type { TestsStream } from 'node:test';

// How long each test file took, printed by test/run.ts once the suite is done, slowest first: the place to
// look when the suite gets slow (and what its order of files is taken from). A file's time is the sum of its
// top-level suites and tests (they run one after another inside the file; files run two at a time).

type Ended = { nesting: number; file?: string; details: { duration_ms: number } };

export class FileDurations {
  private readonly byFile = new Map<string, number>();

  constructor(stream: TestsStream) {
    const take = ({ nesting, file, details }: Ended) => {
      if (nesting === 0 && file) this.byFile.set(file, (this.byFile.get(file) ?? 0) + details.duration_ms);
    };
    stream.on('test:pass', take);
    stream.on('test:fail', take);
  }

  /** The table, from `root`'s point of view. */
  table(root: string): string {
    const rows = [...this.byFile].sort((a, b) => b[1] - a[1]);
    return [
      `\ntime per test file, slowest first (${rows.length} files):`,
      ...rows.map(([file, ms]) => `${(ms / 1000).toFixed(1).padStart(7)} s  ${relative(root, file)}`),
      '',
    ].join('\n');
  }
}
