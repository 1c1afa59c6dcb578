import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import { EXEMPT_ROUTE_PATHS } from '../../src/api/plugins/access-control.js';
import { rateLimitNote, startBanner } from '../../src/cli/demo.js';
import { loadConfig } from '../../src/config.js';
import { describeConfig } from '../../src/settings.js';

// What a newcomer reads first: the README's two commands and tables, and the banner `npm start` prints.

const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');

/** The text of a README section: from its heading to the next heading of the same or a higher level. */
function section(heading: string): string {
  const start = readme.indexOf(`\n${heading}\n`);
  assert.ok(start >= 0, heading);
  const level = /^#+/.exec(heading)![0];
  const rest = readme.slice(start + heading.length + 2);
  const end = rest.search(new RegExp(`^#{1,${level.length}} `, 'm'));
  return end < 0 ? rest : rest.slice(0, end);
}

/** The tables of a text: runs of `|` lines; each must start with a header row and its `| --- |` separator. */
function tables(text: string): string[][] {
  const found: string[][] = [];
  let current: string[] | undefined;
  for (const line of text.split('\n')) {
    if (line.startsWith('|')) (current ??= []).push(line);
    else if (current) {
      found.push(current);
      current = undefined;
    }
  }
  if (current) found.push(current);
  return found;
}

/** A table row's cells (an escaped `\|` stays inside its cell). */
const cells = (row: string) => row.split(/(?<!\\)\|/);

describe('README', () => {
  test('every table has a header and a separator row (a row after a paragraph does not render)', () => {
    const all = tables(readme);
    assert.ok(all.length >= 3);
    for (const table of all) {
      assert.match(table[1] ?? '', /^\|( *:?-+:? *\|)+$/, `not a table: ${table[0]}`);
      const columns = cells(table[0]).length;
      for (const row of table) assert.equal(cells(row).length, columns, row);
    }
  });

  test('every setting is in a table (configuration or access control), with its default', () => {
    const rows = tables(readme).flat();
    for (const setting of describeConfig()) {
      if (setting.name.startsWith('TEST_')) continue; // crash-safety test hooks, described in --help only
      const row = rows.find((r) => cells(r)[1].includes(`\`${setting.name}\``));
      assert.ok(row, `${setting.name} has no table row`);
      const shown = setting.default === '' ? /\((empty|none|unset)\)/ : new RegExp(`\`${setting.default}\``);
      assert.match(row, shown, `${setting.name}: default ${setting.default}`);
    }
  });

  test('the two-command section says the demo is rate-limited and how to lift it', () => {
    const text = section('## Two commands');
    const { RATE_LIMIT_ANON_PER_MIN } = loadConfig({});
    assert.match(text, new RegExp(`${RATE_LIMIT_ANON_PER_MIN} requests a minute per client IP`));
    assert.ok(text.includes('RATE_LIMIT_ENABLED=false npm start'));
    assert.ok(text.includes('RATE_LIMIT_ANON_PER_MIN='));
    // what it says of the docs page is what access control does
    assert.ok(EXEMPT_ROUTE_PATHS.includes('/doc'));
    assert.match(
      text.replace(/\n/g, ' '),
      /The docs page itself is free; the requests its "Try it out" sends count/,
    );
  });

  test('names no count of tests (the runner prints it; a number written here goes stale)', () => {
    assert.doesNotMatch(readme, /\b\d[\d,]* tests\b/);
  });

  test('points at nothing a user of the repository lacks: no design notes, no contract sections', () => {
    for (const text of [
      readme,
      ...['architecture.md', 'deploy.md', 'openapi.yaml'].map((doc) =>
        readFileSync(new URL(`../../docs/${doc}`, import.meta.url), 'utf8'),
      ),
    ]) {
      assert.doesNotMatch(text, /DESIGN\.md|NOTES-|\bcontract \d|of the contract|the contract's/);
    }
  });

  test('the exempt routes are the ones EXEMPT_ROUTE_PATHS lists', () => {
    const line = /Exempt from keys and limits: ([^(]*)\(/.exec(readme.replace(/\n +/g, ' '));
    assert.ok(line);
    const listed = [...line[1].matchAll(/`([^`]+)`/g)].map((m) => m[1]);
    assert.deepEqual(listed, EXEMPT_ROUTE_PATHS);
  });
});

describe('npm start banner', () => {
  const urls = [{ what: 'latest block', path: '/extended/v2/blocks/latest' }];

  test('names the rate limits and how to change them for local use', () => {
    const banner = startBanner(loadConfig({}), 'http://localhost:3999', urls);
    assert.equal(
      banner,
      '\nStacks read API on http://localhost:3999 — try:\n' +
        '  latest block  http://localhost:3999/extended/v2/blocks/latest\n\n' +
        'Rate limits: 50 requests a minute per client IP without an API key (RATE_LIMIT_ANON_PER_MIN), ' +
        '500 with one (RATE_LIMIT_KEY_PER_MIN); over the limit, 429 (/doc itself is free; its "Try it out" requests count).\n' +
        'For local use: RATE_LIMIT_ENABLED=false npm start, or raise RATE_LIMIT_ANON_PER_MIN.\n\n',
    );
  });

  test('follows the configuration', () => {
    assert.equal(
      rateLimitNote(loadConfig({ RATE_LIMIT_ENABLED: 'false' })),
      'Rate limits are off (RATE_LIMIT_ENABLED=false).',
    );
    assert.match(
      rateLimitNote(loadConfig({ RATE_LIMIT_ANON_PER_MIN: '7', RATE_LIMIT_KEY_PER_MIN: '70' })),
      /^Rate limits: 7 requests a minute per client IP without an API key \(RATE_LIMIT_ANON_PER_MIN\), 70 with one/,
    );
    assert.match(
      rateLimitNote(loadConfig({ API_KEYS_REQUIRED: 'true' })),
      /^Rate limits: an API key is required \(API_KEYS_REQUIRED=true\), 500 with one/,
    );
  });
});
