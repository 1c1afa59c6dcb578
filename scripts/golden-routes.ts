// npx tsx scripts/golden-routes.ts [--golden beyond/mocknet ...]
// What the original API was asked beyond the contract's ten routes (golden/beyond/<fixture>.jsonl.gz and
// golden/generated/gen-small-beyond.jsonl.gz): per route, the records, the statuses, the query parameters
// asked together, and the first path asked per status. Markdown, for the appendix of docs/upstream.md.
import { parseArgs } from 'node:util';
import { beyondGoldenNames, loadGolden } from '../test/support/shared.js';

/** The routes of the beyond goldens; `:name` stands for one path segment. */
const ROUTES = [
  '/extended/v2/addresses/:principal/transactions/:tx_id/events',
  '/extended/v2/addresses/:principal/transactions',
  '/extended/v2/addresses/:principal/balances/stx',
  '/extended/v2/addresses/:principal/balances/ft',
  '/extended/v2/burn-blocks/:height_or_hash/blocks',
  '/extended/v2/burn-blocks/:height_or_hash',
  '/extended/v2/burn-blocks',
  '/extended/v2/blocks/:height_or_hash/transactions',
  '/extended/v2/blocks',
  '/extended/v1/tx/mempool',
  '/extended/v1/tx',
  '/extended/v1/address/:principal/mempool',
  '/extended/v1/address/:principal/nonces',
  '/extended/v1/address/:principal/stx',
  '/extended/v1/tokens/nft/holdings',
  '/extended/v1/contract/:contract_id',
  '/extended/v1/search/:id',
];
const UNMATCHED = '(no route above)';

function routeOf(path: string): string {
  const segments = path.split('?')[0].split('/');
  const route = ROUTES.find((template) => {
    const parts = template.split('/');
    return (
      parts.length === segments.length &&
      parts.every((part, i) => (part.startsWith(':') ? segments[i] !== '' : part === segments[i]))
    );
  });
  return route ?? UNMATCHED;
}

/** The query keys a path asks, sorted: `limit,offset`, or `(none)`. */
function queryKeys(path: string): string {
  const search = path.includes('?') ? path.slice(path.indexOf('?') + 1) : '';
  const keys = [...new Set(new URLSearchParams(search).keys())].sort();
  return keys.length > 0 ? keys.join(',') : '(none)';
}

interface RouteRecords {
  records: number;
  statuses: Map<number, number>;
  queries: Map<string, number>;
  examples: Map<number, string>;
}

const count = <K>(map: Map<K, number>, key: K) => map.set(key, (map.get(key) ?? 0) + 1);

const { values } = parseArgs({ options: { golden: { type: 'string', multiple: true } } });
const goldens = values.golden ?? beyondGoldenNames();

const byRoute = new Map<string, RouteRecords>();
for (const golden of goldens) {
  for (const record of loadGolden(golden)) {
    const route = routeOf(record.path);
    let entry = byRoute.get(route);
    if (!entry) {
      entry = { records: 0, statuses: new Map(), queries: new Map(), examples: new Map() };
      byRoute.set(route, entry);
    }
    entry.records++;
    count(entry.statuses, record.status);
    count(entry.queries, queryKeys(record.path));
    if (!entry.examples.has(record.status)) entry.examples.set(record.status, record.path);
  }
}

const order = [...ROUTES, UNMATCHED].filter((route) => byRoute.has(route));
const tally = <K>(map: Map<K, number>) =>
  [...map]
    .sort((a, b) => b[1] - a[1] || String(a[0]).localeCompare(String(b[0])))
    .map(([key, n]) => `${String(key)} ×${n}`)
    .join('; ');

const lines = [
  `Goldens: ${goldens.join(', ')}.`,
  '',
  '| route | records | statuses | query parameters asked together |',
  '| --- | --- | --- | --- |',
  ...order.map((route) => {
    const e = byRoute.get(route)!;
    return `| \`${route}\` | ${e.records} | ${tally(e.statuses)} | ${tally(e.queries)} |`;
  }),
  '',
  'First path asked per status:',
  '',
  ...order.flatMap((route) =>
    [...byRoute.get(route)!.examples]
      .sort((a, b) => a[0] - b[0])
      .map(([status, path]) => `- \`${route}\` ${status}: \`${path}\``),
  ),
];
process.stdout.write(lines.join('\n') + '\n');
