import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { CONTRACT_ENDPOINTS } from '../support/contract.js';
import { startTestApi, type TestApi } from '../support/api.js';
import { seedDemoChain } from '../../src/cli/demo.js';
import { DEMO } from '../../src/api/schemas/examples.js';
import { loadConfig } from '../../src/config.js';
import type { Store } from '../../src/store/store.js';
import { openTestStore, silentLogger, stopOwnCluster } from '../support/database.js';

// Opens /doc in a real headless Chromium (Debian's `chromium`, installed by .ci/run) and checks what a
// person would see: every endpoint listed, deprecations marked, "Try it out" working against this server,
// and nothing fetched from outside the machine. Skips, saying why, only if the browser cannot start.

after(stopOwnCluster);

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const SCREENSHOT_DIR = fileURLToPath(new URL('../../.tmp/screenshots/', import.meta.url));

describe('interactive docs page in headless Chromium', () => {
  let skipReason: string | undefined;
  let context: BrowserContext | undefined;
  let profileDir: string | undefined;
  let page: Page;
  /** the page, and two more tabs of /doc for the "Try it out" of every operation */
  let tabs: Page[];
  let api: TestApi | undefined;
  let store: Store | undefined;
  let baseUrl: string;
  const outsideRequests: string[] = [];

  before(async () => {
    if (!existsSync(CHROMIUM)) {
      skipReason = `no browser at ${CHROMIUM} (install Debian's chromium, as .ci/run does)`;
      console.log(`# docs page test skipped: ${skipReason}`);
      return;
    }
    profileDir = mkdtempSync(join(tmpdir(), 'stacks-api-chromium-'));
    try {
      context = await chromium.launchPersistentContext(profileDir, {
        executablePath: CHROMIUM,
        headless: true,
        args: [
          '--headless',
          '--no-sandbox',
          '--disable-gpu',
          '--disable-quic',
          '--no-first-run',
          '--disable-background-networking',
          '--disable-component-update',
          '--disable-sync',
        ],
        viewport: { width: 1280, height: 900 },
        timeout: 60_000,
      });
    } catch (err) {
      skipReason = `${CHROMIUM} did not start: ${(err as Error).message.split('\n')[0]}`;
      console.log(`# docs page test skipped: ${skipReason}`);
      return;
    }
    // The demo chain `npm start` seeds (the parameter examples /doc pre-fills name its blocks, txs,
    // principals), indexed while the browser loads the page, which needs none of it.
    store = await openTestStore('postgres');
    api = await startTestApi({ store, listen: true });
    baseUrl = api.baseUrl;
    const seeded = seedDemoChain(store, loadConfig({}), silentLogger);
    // Offline: anything not served by this server is refused and remembered.
    await context.route('**/*', async (route) => {
      const url = route.request().url();
      if (url.startsWith(`${baseUrl}/`) || url.startsWith('data:')) return route.continue();
      outsideRequests.push(url);
      return route.abort();
    });
    page = context.pages()[0] ?? (await context.newPage());
    tabs = [page, await context.newPage(), await context.newPage()];
    await Promise.all([
      seeded,
      ...tabs.map(async (tab) => {
        await tab.goto(`${baseUrl}/doc`, { waitUntil: 'load', timeout: 60_000 });
        await tab.waitForSelector('.opblock-summary [data-path]', { timeout: 60_000 });
      }),
    ]);
  });

  after(async () => {
    await context?.close();
    if (profileDir) rmSync(profileDir, { recursive: true, force: true });
    await api?.close();
    await store?.close();
  });

  const listed = async () =>
    page.$$eval('.opblock', (blocks) =>
      blocks.map((b) => ({
        // a deprecated operation's path element has its own class; both carry data-path
        path: b.querySelector('.opblock-summary [data-path]')?.getAttribute('data-path') ?? '',
        deprecated: b.classList.contains('opblock-deprecated'),
      })),
    );

  test('renders the title, the API description and the service operations; saves a screenshot', async (t) => {
    if (skipReason) return t.skip(skipReason);
    assert.equal(await page.title(), 'Stacks read API — reference');
    assert.match(await page.locator('.info .title').innerText(), /Stacks read API/);
    assert.match(await page.locator('.info .description').innerText(), /X-API-Key/);
    const paths = (await listed()).map((b) => b.path);
    for (const path of ['/extended', '/health', '/ready']) assert.ok(paths.includes(path), path);
    mkdirSync(SCREENSHOT_DIR, { recursive: true });
    const file = join(SCREENSHOT_DIR, 'doc-page.png');
    await page.screenshot({ path: file, fullPage: true });
    assert.ok(statSync(file).size > 10_000, 'a screenshot with something in it');
    console.log(`# screenshot: ${file}`);
  });

  for (const endpoint of CONTRACT_ENDPOINTS) {
    test(`lists ${endpoint.section} GET ${endpoint.path}`, async (t) => {
      if (skipReason) return t.skip(skipReason);
      const block = (await listed()).find((b) => b.path === endpoint.path);
      assert.ok(block, `${endpoint.path} is not on the page`);
      assert.equal(block.deprecated, endpoint.deprecated, 'shown as deprecated');
    });
  }

  // What each operation's answer to its pre-filled examples must show (the demo chain's values); a test
  // fails while a documented GET operation has no entry here.
  const json = (body: string) => JSON.parse(body) as Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
  const page5 = (body: string) => {
    const answer = json(body);
    assert.equal(answer.limit, 5);
    assert.equal(answer.offset, 0);
    return answer;
  };
  const EXPECTED: Record<string, (body: string) => void> = {
    get_block: (body) => {
      assert.equal(json(body).height, DEMO.blockHeight);
      assert.equal(json(body).hash, DEMO.blockHash);
    },
    get_block_by_burn_block_height: (body) =>
      assert.equal(json(body).burn_block_height, DEMO.burnBlockHeight),
    get_block_by_burn_block_hash: (body) => assert.equal(json(body).burn_block_hash, DEMO.burnBlockHash),
    get_block_by_hash: (body) => assert.equal(json(body).hash, DEMO.blockHash),
    get_block_by_height: (body) => assert.equal(json(body).height, DEMO.blockHeight),
    get_microblock_by_hash: (body) => assert.equal(json(body).microblock_hash, DEMO.microblockHash),
    get_blocks: (body) => {
      const answer = page5(body);
      assert.equal(answer.cursor, DEMO.indexBlockHash);
      assert.equal(answer.results[0].index_block_hash, DEMO.indexBlockHash);
    },
    get_block_transactions: (body) =>
      assert.ok(
        page5(body).results.every((tx: { block_height: number }) => tx.block_height === DEMO.blockHeight),
      ),
    get_burn_blocks: (body) => assert.equal(page5(body).results.length, 5),
    get_burn_block: (body) => assert.equal(json(body).burn_block_height, DEMO.burnBlockHeight),
    get_blocks_by_burn_block: (body) =>
      assert.ok(page5(body).results.some((b: { hash: string }) => b.hash === DEMO.blockHash)),
    get_mempool_transaction_stats: (body) =>
      assert.equal(typeof json(body).tx_type_counts.token_transfer, 'number'),
    get_mempool_fee_priorities: (body) => assert.equal(typeof json(body).all.medium_priority, 'number'),
    get_smart_contracts_status: (body) =>
      assert.deepEqual(Object.keys(json(body)), [DEMO.contractId, DEMO.otherContractId]),
    get_contract_by_id: (body) => assert.equal(json(body).contract_id, DEMO.contractId),
    search_by_id: (body) =>
      assert.deepEqual([json(body).found, json(body).result.entity_id], [true, DEMO.txId]),
    get_tx_list_details: (body) => assert.deepEqual(Object.keys(json(body)), [DEMO.txId, DEMO.otherTxId]),
    get_transaction_by_id: (body) => assert.equal(json(body).tx_id, DEMO.txId),
    get_transaction_list: (body) =>
      assert.ok(
        page5(body).results.every((tx: { tx_type: string }) =>
          ['contract_call', 'token_transfer'].includes(tx.tx_type),
        ),
      ),
    // sender and recipient both the busy address: it sent itself nothing pending
    get_mempool_transaction_list: (body) => assert.equal(page5(body).total, 0),
    get_address_mempool_transactions: (body) =>
      assert.ok(
        page5(body).results.some((tx: { sender_address: string }) => tx.sender_address === DEMO.busyAddress),
      ),
    get_nft_holdings: (body) =>
      assert.deepEqual(
        new Set(page5(body).results.map((nft: { asset_identifier: string }) => nft.asset_identifier)),
        new Set([`${DEMO.contractId}::pixel-punk`]),
      ),
    get_account_balance: (body) => assert.match(json(body).stx.balance, /^\d+$/),
    get_account_transactions_with_transfers: (body) => assert.equal(page5(body).results.length, 5),
    get_single_transaction_with_transfers: (body) => assert.equal(json(body).tx.tx_id, DEMO.busyTxId),
    get_address_transactions: (body) => assert.equal(page5(body).results.length, 5),
    get_address_transaction_events: (body) =>
      assert.equal(page5(body).results[0].data.recipient, DEMO.busyAddress),
    get_account_nonces: (body) => assert.equal(json(body).last_mempool_tx_nonce, null),
    get_account_stx_balance: (body) => assert.match(json(body).balance, /^\d+$/),
    get_principal_stx_balance: (body) => assert.match(json(body).locked, /^\d+$/),
    get_principal_ft_balances: (body) => assert.match(page5(body).results[0].token, /mango-token::mango$/),
    get_status: (body) => assert.match(json(body).server_version, /^stacks-read-api /),
    get_health: (body) => assert.equal(json(body).status, 'ok'),
    get_readiness: (body) => assert.equal(json(body).status, 'ready'),
  };

  test('"Try it out" → Execute on every GET operation: 200, with what its examples name', async (t) => {
    if (skipReason) return t.skip(skipReason);
    type Parameter = { name: string; in: string; description?: string };
    type Operation = { operationId: string; tags: string[]; parameters?: Parameter[] };
    const doc = (await (await fetch(`${baseUrl}/openapi.json`)).json()) as {
      paths: Record<string, Record<string, Operation>>;
    };
    const operations = Object.values(doc.paths).flatMap((item) => (item.get ? [item.get] : []));
    assert.deepEqual(operations.map((o) => o.operationId).sort(), Object.keys(EXPECTED).sort());
    // Swagger UI's element id of an operation: its tag (spaces as underscores) and its id
    const domId = (o: Operation) => `operations-${o.tags[0].replace(/\s/g, '_')}-${o.operationId}`;
    // Opening an operation costs Swagger UI ~0.5 s of rendering, and every open one is rendered again on each
    // change (30 opened together took 45 s): so two at a time, in three tabs at once.
    const GROUP = 2;
    const answers = new Map<string, { status: string; url: string; body: string }>();
    await Promise.all(
      tabs.map(async (tab, t) => {
        const mine = operations.filter((_, i) => i % tabs.length === t);
        for (let g = 0; g < mine.length; g += GROUP) {
          for (const [id, answer] of await tryGroup(tab, mine.slice(g, g + GROUP))) answers.set(id, answer);
        }
      }),
    );

    /** Opens the operations, presses each "Try it out", then each Execute, and reads each answer. */
    async function tryGroup(tab: Page, group: Operation[]) {
      const ids = group.map(domId);
      const inAll = (selector: string) => ids.map((id) => `#${id} ${selector}`);
      const clickAll = (selector: string) =>
        tab.locator(inAll(selector).join(', ')).evaluateAll((elements) => {
          for (const element of elements) (element as unknown as { click(): void }).click();
        });
      const presentInAll = (selector: string) =>
        tab.waitForFunction(
          `${JSON.stringify(inAll(selector))}.every((s) => document.querySelector(s) !== null)`,
          undefined,
          { timeout: 30_000 },
        );
      await clickAll('.opblock-summary-control');
      await presentInAll('.try-out__btn');
      // (an operation left in "Try it out" mode by an earlier test shows Cancel instead)
      await clickAll('.try-out__btn:not(.cancel)');
      await presentInAll('.execute');
      // A parameter whose description says it is "not with" another one also filled (a block height or a
      // block hash, `until_block` or `unanchored`, `address` or the sender) is cleared, as a person would.
      for (const o of group) {
        const filled = new Set((o.parameters ?? []).map((p) => p.name));
        for (const p of o.parameters ?? []) {
          const excluded = /not with `([a-z_]+)`/.exec(p.description ?? '')?.[1];
          if (excluded === undefined || !filled.has(excluded)) continue;
          filled.delete(p.name);
          // (the field tells Swagger UI after a 300 ms pause, or at once when it loses the focus)
          const input = tab.locator(`#${domId(o)} tr[data-param-name="${p.name}"] input`);
          await input.fill('');
          await input.blur();
        }
      }
      await clickAll('.execute');
      const answerSelector = '.live-responses-table tr.response .response-col_status';
      await presentInAll(answerSelector);
      // (no named function in code run by the page: tsx would wrap it in a helper the page does not have)
      const read = await tab
        .locator(ids.map((id) => `#${id}`).join(', '))
        .evaluateAll(
          (blocks, selectors) =>
            blocks.map((block) => [
              block.id,
              ...selectors.map(
                (selector) =>
                  (block.querySelector(selector) as unknown as { innerText: string } | null)?.innerText ?? '',
              ),
            ]),
          [answerSelector, '.request-url pre', '.live-responses-table .microlight'],
        );
      // closed again (still in "Try it out" mode): the next group renders alone
      await clickAll('.opblock-summary-control');
      return read.map(([id, status, url, body]) => [id, { status: status.trim(), url, body }] as const);
    }

    for (const o of operations) {
      const { status, url, body } = answers.get(domId(o))!;
      assert.equal(status, '200', `${o.operationId}: ${url} → ${body.slice(0, 200)}`);
      assert.ok(url.startsWith(`${baseUrl}/`), url);
      try {
        EXPECTED[o.operationId](body);
      } catch (err) {
        throw new Error(`${o.operationId} (${url}): ${(err as Error).message}`, { cause: err });
      }
    }
  });

  test('height_or_hash is a text field (not a drop-down offering only "latest")', async (t) => {
    if (skipReason) return t.skip(skipReason);
    const operation = page.locator('#operations-Blocks-get_block');
    await operation.locator('.opblock-summary').click();
    // still in "Try it out" mode from the test above (the button then reads Cancel)
    const tryOut = operation.locator('.try-out__btn', { hasText: 'Try it out' });
    if ((await tryOut.count()) > 0) await tryOut.click();
    const row = operation.locator('tr[data-param-name="height_or_hash"]');
    assert.equal(await row.locator('select').count(), 0);
    const input = row.locator('input[type="text"]');
    assert.equal(await input.inputValue(), String(DEMO.blockHeight));
    await input.fill('latest');
    // the answer read off the network: the page shows the new request's URL before its answer replaces the
    // answer of the operation's earlier run (height 70), so reading the page raced with it
    const answered = page.waitForResponse((r) => r.url().endsWith('/extended/v2/blocks/latest'), {
      timeout: 30_000,
    });
    await operation.locator('.execute').click();
    const response = await answered;
    assert.equal(response.status(), 200);
    assert.equal(((await response.json()) as { height: number }).height, 100);
  });

  test('fetched nothing from outside this server', (t) => {
    if (skipReason) return t.skip(skipReason);
    assert.deepEqual(outsideRequests, []);
  });
});
