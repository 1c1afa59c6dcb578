import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import YAML from 'yaml';
import { EXEMPT_ROUTE_PATHS } from '../../src/api/plugins/access-control.js';
import { rateLimitNote, startBanner } from '../../src/cli/demo.js';
import { loadConfig } from '../../src/config.js';
import { describeConfig } from '../../src/settings.js';

// What a newcomer reads first: the README's two commands, routes and configuration, the banner `npm start`
// prints, and the docs/ pages they link to. Where a page repeats a list the code holds (settings, routes,
// exempt paths), it is checked against that list here, so it cannot go stale.

const root = fileURLToPath(new URL('../../', import.meta.url));
const read = (path: string) => readFileSync(join(root, path), 'utf8');
const readme = read('README.md');
const operations = read('docs/operations.md');
/** The pages of the guide: the README and every page of docs/. */
const pages = [
  'README.md',
  ...readdirSync(join(root, 'docs')).flatMap((f) => (f.endsWith('.md') ? [`docs/${f}`] : [])),
];

/** The text of a section: from its heading to the next heading of the same or a higher level. */
function section(heading: string, text = readme): string {
  const start = text.indexOf(`\n${heading}\n`);
  assert.ok(start >= 0, heading);
  const level = /^#+/.exec(heading)![0];
  const rest = text.slice(start + heading.length + 2);
  const end = rest.search(new RegExp(`^#{1,${level.length}} `, 'm'));
  return end < 0 ? rest : rest.slice(0, end);
}

/** A page without its fenced code blocks (a `#` there is no heading, a `[x](y)` no link). */
const prose = (text: string) => text.replace(/^```[^]*?^```$/gm, '');

/** The anchors of a page's headings, as GitHub makes them (a repeated heading gets `-1`, `-2`, ...). */
function anchors(text: string): Set<string> {
  const seen = new Map<string, number>();
  const found = new Set<string>();
  for (const [, heading] of prose(text).matchAll(/^#{1,6} (.+)$/gm)) {
    const slug = heading
      .trim()
      .toLowerCase()
      .replace(/[^\p{L}\p{N} _-]/gu, '')
      .replace(/ /g, '-');
    const count = seen.get(slug) ?? 0;
    seen.set(slug, count + 1);
    found.add(count === 0 ? slug : `${slug}-${count}`);
  }
  return found;
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
  test('the configuration table lists every setting of src/settings.ts, in its order, with its default', () => {
    const rows = tables(section('## Configuration')).flat().slice(2);
    // crash-safety test hooks are described in --help only
    const settings = describeConfig().filter((setting) => !setting.name.startsWith('TEST_'));
    const listed = rows.flatMap((row) => [...cells(row)[1].matchAll(/`([A-Z0-9_]+)`/g)].map((m) => m[1]));
    assert.deepEqual(
      listed,
      settings.map((setting) => setting.name),
      'one row (or a pair) per setting, in order',
    );
    for (const setting of settings) {
      const row = rows.find((r) => cells(r)[1].includes(`\`${setting.name}\``))!;
      const shown = setting.default === '' ? /\((empty|none|unset)\)/ : new RegExp(`\`${setting.default}\``);
      assert.match(cells(row)[2], shown, `${setting.name}: default ${setting.default}`);
    }
  });

  /** The paths of the routes beyond the contract's ten (docs/upstream.md C). */
  const BEYOND_THE_CONTRACT = new RegExp(
    [
      '^/extended/v2/addresses/',
      '^/extended/v2/burn-blocks',
      '^/extended/v2/blocks(/\\{height_or_hash\\}/transactions)?$',
      '^/extended/v1/address/\\{principal\\}/(nonces|stx|mempool)$',
      '^/extended/v1/tx(/mempool)?$',
      '^/extended/v1/tokens/',
      '^/extended/v1/contract/',
      '^/extended/v1/search/',
      '^/extended/v1/block/(\\{hash\\}|by_height/|by_burn_block_hash/)',
      '^/extended/v1/microblock/',
    ].join('|'),
  );

  test('the routes section lists every route of the OpenAPI document, under its tag, and no other', () => {
    const text = section('## Routes');
    const document = YAML.parse(read('docs/openapi.yaml')) as {
      paths: Record<string, { get?: { tags?: string[] } }>;
    };
    // the groups: a bold line `**Tag**` (maybe followed by a remark) and what follows, to the next one
    const groups = new Map<string, string>();
    for (const part of text.split(/^(?=\*\*[^*\n]+\*\*)/m).slice(1))
      groups.set(/^\*\*([^*]+)\*\*/.exec(part)![1], part);
    const served = Object.entries(document.paths).filter(([, item]) => item.get);
    assert.ok(served.length >= 13, `${served.length} routes`);
    for (const [path, item] of served) {
      // the original's routes beyond the contract's ten have their own group, whatever their tag
      const tag = BEYOND_THE_CONTRACT.test(path) ? 'Beyond the contract' : (item.get!.tags?.[0] ?? '');
      const group = groups.get(tag);
      assert.ok(group, `a group **${tag}** for ${path}`);
      assert.match(
        group,
        new RegExp(`\`GET ${path.replace(/[{}?]/g, '\\$&')}[\`?]`),
        `${path} under **${tag}**`,
      );
    }
    const listed = [...text.matchAll(/`GET (\/[^`?]*)/g)].map((m) => m[1]);
    for (const path of listed) assert.ok(document.paths[path]?.get, `${path} is listed but not served`);
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

  test('stays a guide: at most 12 KB, the rest in docs/', () => {
    assert.ok(Buffer.byteLength(readme) <= 12 * 1024, `${Buffer.byteLength(readme)} bytes`);
  });
});

describe('the docs', () => {
  test('every table has a header and a separator row (a row after a paragraph does not render)', () => {
    const all = pages.flatMap((page) => tables(prose(read(page))).map((table) => ({ page, table })));
    assert.ok(all.length >= 10, `${all.length} tables`);
    for (const { page, table } of all) {
      assert.match(table[1] ?? '', /^\|( *:?-+:? *\|)+$/, `${page}: not a table: ${table[0]}`);
      const columns = cells(table[0]).length;
      for (const row of table) assert.equal(cells(row).length, columns, `${page}: ${row}`);
    }
  });

  test('point at nothing a user of the repository lacks: no design notes, no contract sections', () => {
    for (const page of [...pages, 'docs/openapi.yaml'])
      assert.doesNotMatch(read(page), /DESIGN\.md|NOTES-|\bcontract \d|of the contract|the contract's/, page);
  });

  test('every link between pages names a file that exists, and a heading of it', () => {
    let links = 0;
    for (const page of pages) {
      for (const [, target] of prose(read(page)).matchAll(/\]\(([^)\s]+)\)/g)) {
        if (/^[a-z]+:/.test(target)) continue; // a web address
        links++;
        const [file, anchor] = target.split('#');
        const path = file === '' ? page : relative(root, join(root, dirname(page), file));
        assert.ok(existsSync(join(root, path)), `${page}: ${target}`);
        if (anchor !== undefined) assert.ok(anchors(read(path)).has(anchor), `${page}: ${target}`);
      }
    }
    assert.ok(links >= 40, `${links} links`);
  });

  test('every file of the repository a page names in code exists', () => {
    for (const page of pages) {
      for (const [, path] of read(page).matchAll(
        /`((?:src|test|bench|scripts|docs|patches)\/[^`\s*<>]+)`/g,
      )) {
        if (path.startsWith('bench/out/')) continue; // written by the benchmarks
        assert.ok(existsSync(join(root, path)), `${page}: ${path}`);
      }
    }
  });

  test('the exempt routes of docs/operations.md are the ones EXEMPT_ROUTE_PATHS lists', () => {
    const line = /Exempt from keys and limits: ([^(]*)\(/.exec(operations.replace(/\n +/g, ' '));
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
