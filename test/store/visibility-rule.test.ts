import assert from 'node:assert/strict';
import { readdir, readFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { anchoredVisibleRow, canonicalRow, unconfirmedRow, visibleRow } from '../../src/store/visibility.js';

// The visibility rule is written once (src/store/visibility.ts); every statement takes its text from there.
// This fails on the rule's text written anywhere else in src/.

const src = fileURLToPath(new URL('../../src/', import.meta.url));

/** The rule's text in any spelling: "x.canonical AND x.microblock_canonical", "x.index_block_hash <> ''". */
const RULE_TEXT = [
  /\bcanonical\s+AND\s+(\w+\.)?microblock_canonical\b/,
  /\bindex_block_hash\s*(<>|!=)\s*''/,
  /\bindex_block_hash\s*=\s*''/,
];

/**
 * Where the rule's text may appear: the rule's module, the schema (indexes), and the write path that moves
 * rows in and out of the unconfirmed stream (it sets index_block_hash, and finds those rows by it).
 */
const ALLOWED = ['store/visibility.ts', 'store/migrations/', 'store/write/microblocks.ts'];

async function sourceFiles(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true, recursive: true });
  return entries
    .filter((e) => e.isFile() && /\.(ts|sql)$/.test(e.name))
    .map((e) => join(e.parentPath, e.name));
}

describe('the visibility rule', () => {
  test('is written only in src/store/visibility.ts (and the allowed places)', async () => {
    const offenders: string[] = [];
    for (const file of await sourceFiles(src)) {
      const path = relative(src, file);
      if (ALLOWED.some((allowed) => path.startsWith(allowed))) continue;
      const lines = (await readFile(file, 'utf8')).split('\n');
      lines.forEach((line, i) => {
        if (RULE_TEXT.some((pattern) => pattern.test(line)))
          offenders.push(`src/${path}:${i + 1}: ${line.trim()}`);
      });
    }
    assert.deepEqual(offenders, []);
  });

  test('the patterns find the rule as the module writes it', () => {
    assert.match(canonicalRow('t'), RULE_TEXT[0]);
    assert.match(canonicalRow(''), RULE_TEXT[0]);
    assert.match(anchoredVisibleRow('p'), RULE_TEXT[1]);
    assert.match(unconfirmedRow('u'), RULE_TEXT[2]);
    assert.equal(
      visibleRow('t', '$2'),
      "t.canonical AND t.microblock_canonical AND (t.index_block_hash <> '' OR $2::boolean)",
    );
  });
});
