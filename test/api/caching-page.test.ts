import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { after, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { caches, type CacheDeclaration } from '../../src/caches.js';
import { startTestApi } from '../support/api.js';
import { addressOf, ev, transferTx } from '../support/chain.js';
import { stopOwnCluster } from '../support/database.js';

// docs/caching.md lists every cache of the process, one row each: this test fails when a server holds a cache
// the page does not list, when the page lists one no server holds, and when a row says something else than the
// cache's declaration (src/caches.ts: every cache joins the registry with its row). The server runs with
// access control and in-memory rate limits (their caches exist only then), and is asked every route once: a
// route's answer caches are made when the route is registered, and the caches per database on first use.

after(stopOwnCluster);

const root = fileURLToPath(new URL('../../', import.meta.url));
const PAGE = 'docs/caching.md';
const COLUMNS = ['name', 'layer', 'key', 'invalidatedBy', 'bound', 'file'] as const;

/** The rows of the page's table of caches, by name. */
function pageRows(): Map<string, CacheDeclaration> {
  const text = readFileSync(`${root}${PAGE}`, 'utf8');
  const table = text.slice(text.indexOf('\n| name '));
  const rows = new Map<string, CacheDeclaration>();
  for (const line of table.split('\n').slice(3)) {
    if (!line.startsWith('|')) break;
    const cells = line
      .slice(1, -1)
      .split(' | ')
      .map((cell) => cell.trim().replace(/^`(.*)`$/, '$1'));
    assert.equal(cells.length, COLUMNS.length, `${PAGE}: a row of ${COLUMNS.length} cells: ${line}`);
    const row = Object.fromEntries(
      COLUMNS.map((column, i) => [column, cells[i]]),
    ) as unknown as CacheDeclaration;
    assert.ok(!rows.has(row.name), `${PAGE}: ${row.name} listed twice`);
    rows.set(row.name, row);
  }
  return rows;
}

/** The row a declaration asks for, to paste into the page. */
const rowOf = (d: CacheDeclaration) =>
  `| ${COLUMNS.map((column) => (column === 'file' ? `\`${d.file}\`` : d[column])).join(' | ')} |`;

test('docs/caching.md lists every cache a server holds, each as it is declared, and no other', async () => {
  const { chain, app, close } = await startTestApi({
    engine: 'postgres',
    accessControl: {
      apiKeysRequired: false,
      rateLimitEnabled: true,
      anonymousLimit: 1000,
      keyedLimit: 1000,
      trustedProxies: [],
    },
  });
  try {
    const bob = addressOf('bob');
    const tx = await transferTx({ from: 'alice', fee: 10, nonce: 0, to: bob, amount: 5 });
    const block = await chain.block({ txs: [{ tx, events: [ev.stxTransfer(addressOf('alice'), bob, 5)] }] });
    const urls = [
      `/extended/v1/tx/${tx.txid}`,
      `/extended/v1/tx/multiple?tx_id=${tx.txid}`,
      `/extended/v1/address/${bob}/balances`,
      `/extended/v1/address/${bob}/transactions_with_transfers`,
      `/extended/v1/address/${bob}/${tx.txid}/with_transfers`,
      `/extended/v2/blocks/${block.height}`,
      `/extended/v1/block/by_burn_block_height/${block.burn_block_height}`,
      '/extended/v1/tx/mempool/stats',
      '/extended/v2/mempool/fees',
      `/extended/v2/smart-contracts/status?contract_id=${bob}.c`,
      '/extended',
      '/health',
      '/ready',
    ];
    for (const url of urls) {
      const res = await app.inject({ method: 'GET', url });
      assert.equal(res.statusCode, 200, `${url}: ${res.body}`);
    }

    const page = pageRows();
    const held = caches.held();
    const unlisted = held.filter((d) => !page.has(d.name));
    assert.deepEqual(unlisted.map(rowOf), [], `caches the server holds that ${PAGE} does not list`);
    const heldNames = new Set(held.map((d) => d.name));
    const notHeld = [...page.keys()].filter((name) => !heldNames.has(name));
    assert.deepEqual(notHeld, [], `caches ${PAGE} lists that no server holds`);
    for (const declaration of held) {
      assert.equal(
        rowOf(page.get(declaration.name)!),
        rowOf(declaration),
        `${PAGE}: the row of ${declaration.name}`,
      );
      assert.ok(existsSync(`${root}${declaration.file}`), `${declaration.name}: ${declaration.file} exists`);
    }
  } finally {
    await close();
  }
});
