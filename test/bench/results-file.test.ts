import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { RUN_SECTION_BEGIN, RUN_SECTION_END, withRunSection } from '../../bench/markdown.js';

// bench/RESULTS.md is a reference: the latest run's section (written by `npm run bench` between its markers),
// the targets, and the findings, each under an id that comments cite instead of telling the story of a
// measurement. These tests keep the ids stable: an id cited anywhere is defined there, once.

const root = fileURLToPath(new URL('../..', import.meta.url));
const resultsFile = join(root, 'bench/RESULTS.md');
const results = readFileSync(resultsFile, 'utf8');

/** An id as cited: `F-` and lower-case words joined by hyphens (`F-ingest-copy-ceiling`). */
const CITED_ID = /\bF-[a-z][a-z0-9]*(?:-[a-z0-9]+)*/g;
/** An id as defined: the head of an item of the Findings list. */
const DEFINED_ID = /^- \*\*(F-[a-z][a-z0-9]*(?:-[a-z0-9]+)*)\*\*/gm;

/** The text files of `dir` (relative to the repository), recursively; `bench/out` holds generated chains. */
function textFiles(dir: string): string[] {
  const full = join(root, dir);
  if (!existsSync(full)) return [];
  return readdirSync(full).flatMap((name) => {
    const path = join(full, name);
    const rel = relative(root, path);
    if (rel === join('bench', 'out')) return [];
    if (statSync(path).isDirectory()) return textFiles(rel);
    return /\.(ts|mjs|js|sql|md|yaml)$/.test(name) ? [rel] : [];
  });
}

const definedIds = [...results.matchAll(DEFINED_ID)].map((m) => m[1]);

describe('bench/RESULTS.md', () => {
  test('the findings are defined once each, under the Findings heading', () => {
    assert.ok(definedIds.length >= 30, `${definedIds.length} findings`);
    const duplicates = definedIds.filter((id, i) => definedIds.indexOf(id) !== i);
    assert.deepEqual(duplicates, []);
    const findings = results.indexOf('\n## Findings\n');
    assert.ok(findings > 0, 'a "## Findings" section');
    for (const id of definedIds)
      assert.ok(results.indexOf(`- **${id}**`) > findings, `${id} is under Findings`);
  });

  test('every finding id cited in the repository is defined in bench/RESULTS.md', () => {
    const defined = new Set(definedIds);
    const files = ['src', 'bench', 'test', 'docs', 'scripts'].flatMap(textFiles).concat('README.md');
    const undefinedCitations: string[] = [];
    let inCode = 0;
    for (const file of files) {
      const lines = readFileSync(join(root, file), 'utf8').split('\n');
      lines.forEach((line, i) => {
        for (const [id] of line.matchAll(CITED_ID)) {
          if (!file.startsWith(join('bench', 'RESULTS.md')) && !file.startsWith(join('bench', 'history')))
            inCode++;
          if (!defined.has(id)) undefinedCitations.push(`${file}:${i + 1}: ${id}`);
        }
      });
    }
    assert.deepEqual(undefinedCitations, []);
    assert.ok(inCode >= 15, `${inCode} citations outside bench/RESULTS.md and bench/history`);
  });

  test('no source comment tells a measurement by round or points into RESULTS.md: it cites a finding id', () => {
    const diary = textFiles('src').flatMap((file) =>
      readFileSync(join(root, file), 'utf8')
        .split('\n')
        .flatMap((line, i) =>
          /round [0-9]|RESULTS\.md/i.test(line) ? [`${file}:${i + 1}: ${line.trim()}`] : [],
        ),
    );
    assert.deepEqual(diary, []);
  });

  test('its links into bench/history/ name files that exist, and the history index lists every file', () => {
    const linked = [...results.matchAll(/\]\((history\/[^)#\s]+)/g)].map((m) => m[1]);
    assert.ok(linked.length >= definedIds.length, `${linked.length} links`);
    for (const link of linked) assert.ok(existsSync(join(root, 'bench', link)), link);
    const index = readFileSync(join(root, 'bench/history/README.md'), 'utf8');
    for (const name of readdirSync(join(root, 'bench/history'))) {
      if (name !== 'README.md')
        assert.ok(index.includes(`](${name})`), `bench/history/README.md lists ${name}`);
    }
  });

  test('the section `npm run bench` writes is marked once, and replacing it leaves the rest as it is', () => {
    const start = results.indexOf(RUN_SECTION_BEGIN);
    const end = results.indexOf(RUN_SECTION_END);
    assert.ok(start > 0 && end > start, 'both markers, in order');
    assert.equal(results.indexOf(RUN_SECTION_BEGIN, start + 1), -1, 'one begin marker');
    assert.equal(results.indexOf(RUN_SECTION_END, end + 1), -1, 'one end marker');
    // the file's section lists the targets missed (bench/run.ts): every check is in results/latest.md
    assert.match(results.slice(start, end), /\*\*Targets missed\*\* \(\d+ of \d+ met/, 'the targets missed');

    // The run's own markdown, put back, gives the file unchanged.
    const written = results.slice(start + RUN_SECTION_BEGIN.length + 2, end - 1);
    assert.equal(withRunSection(results, written), results);

    const next = withRunSection(results, 'Run of a test.\n');
    assert.equal(next.slice(0, start), results.slice(0, start));
    assert.equal(next.slice(next.indexOf(RUN_SECTION_END)), results.slice(end));
    assert.ok(next.includes(`${RUN_SECTION_BEGIN}\n\nRun of a test.\n\n${RUN_SECTION_END}`));
    for (const id of definedIds) assert.ok(next.includes(`- **${id}**`), `${id} kept`);
  });

  test('a file without the markers gets the section appended under a heading', () => {
    const appended = withRunSection('# Benchmark results\n', 'Run of a test.\n');
    assert.equal(
      appended,
      `# Benchmark results\n\n## Latest run\n\n${RUN_SECTION_BEGIN}\n\nRun of a test.\n\n${RUN_SECTION_END}\n`,
    );
  });
});
