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
    // the demo chain `npm start` seeds: the parameter examples /doc pre-fills name its blocks, txs, principals
    store = await openTestStore('postgres');
    await seedDemoChain(store, loadConfig({}), silentLogger);
    api = await startTestApi({ store, listen: true });
    baseUrl = api.baseUrl;
    page = context.pages()[0] ?? (await context.newPage());
    // Offline: anything not served by this server is refused and remembered.
    await context.route('**/*', async (route) => {
      const url = route.request().url();
      if (url.startsWith(`${baseUrl}/`) || url.startsWith('data:')) return route.continue();
      outsideRequests.push(url);
      return route.abort();
    });
    await page.goto(`${baseUrl}/doc`, { waitUntil: 'load', timeout: 60_000 });
    await page.waitForSelector('.opblock-summary [data-path]', { timeout: 60_000 });
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

  test('"Try it out" on GET /extended calls this server and shows its 200 answer', async (t) => {
    if (skipReason) return t.skip(skipReason);
    const operation = page.locator('#operations-Status-get_status');
    await operation.locator('.opblock-summary').click();
    await operation.locator('.try-out__btn').click();
    await operation.locator('.execute').click();
    const status = operation.locator('.live-responses-table tr.response .response-col_status').first();
    await status.waitFor({ timeout: 30_000 });
    assert.equal((await status.innerText()).trim(), '200');
    assert.match(
      await operation.locator('.live-responses-table .microlight').first().innerText(),
      /server_version/,
    );
  });

  /** Opens an operation, presses "Try it out" and Execute with the pre-filled examples: status and body. */
  async function tryItOut(operationDomId: string) {
    const operation = page.locator(`#${operationDomId}`);
    await operation.locator('.opblock-summary').click();
    await operation.locator('.try-out__btn', { hasText: 'Try it out' }).click();
    await operation.locator('.execute').click();
    const status = operation.locator('.live-responses-table tr.response .response-col_status').first();
    await status.waitFor({ timeout: 30_000 });
    const answer = {
      status: (await status.innerText()).trim(),
      body: await operation.locator('.live-responses-table .microlight').first().innerText(),
      url: await operation.locator('.request-url pre').first().innerText(),
    };
    await operation.locator('.opblock-summary').click(); // closed again: the next one is in view
    return answer;
  }

  // Parameterized operations, run as a person would: the example values are already in the fields.
  const tries: { id: string; path: RegExp; expect: (body: string) => void }[] = [
    {
      id: 'operations-Blocks-get_block',
      path: new RegExp(`/extended/v2/blocks/${DEMO.blockHeight}$`),
      expect: (body) => {
        assert.equal(JSON.parse(body).height, DEMO.blockHeight);
        assert.equal(JSON.parse(body).hash, DEMO.blockHash);
      },
    },
    {
      id: 'operations-Blocks-get_block_by_burn_block_height',
      path: new RegExp(`/by_burn_block_height/${DEMO.burnBlockHeight}$`),
      expect: (body) => assert.equal(JSON.parse(body).burn_block_height, DEMO.burnBlockHeight),
    },
    {
      id: 'operations-Transactions-get_transaction_by_id',
      path: new RegExp(`/extended/v1/tx/${DEMO.txId}\\?`),
      expect: (body) => assert.equal(JSON.parse(body).tx_id, DEMO.txId),
    },
    {
      id: 'operations-Transactions-get_tx_list_details',
      path: /\/extended\/v1\/tx\/multiple\?tx_id=/,
      expect: (body) => assert.deepEqual(Object.keys(JSON.parse(body)), [DEMO.txId, DEMO.otherTxId]),
    },
    {
      id: 'operations-Accounts-get_account_balance',
      path: new RegExp(`/address/${DEMO.busyAddress}/balances`),
      expect: (body) => assert.match(JSON.parse(body).stx.balance, /^\d+$/),
    },
    {
      id: 'operations-Accounts-get_account_transactions_with_transfers',
      path: new RegExp(`/address/${DEMO.busyAddress}/transactions_with_transfers\\?limit=5`),
      expect: (body) => {
        const page = JSON.parse(body);
        assert.equal(page.limit, 5);
        assert.equal(page.results.length, 5);
      },
    },
    {
      id: 'operations-Accounts-get_single_transaction_with_transfers',
      path: new RegExp(`/address/${DEMO.busyAddress}/${DEMO.busyTxId}/with_transfers$`),
      expect: (body) => assert.equal(JSON.parse(body).tx.tx_id, DEMO.busyTxId),
    },
    {
      id: 'operations-Smart_Contracts-get_smart_contracts_status',
      path: /\/extended\/v2\/smart-contracts\/status\?contract_id=/,
      expect: (body) =>
        assert.deepEqual(Object.keys(JSON.parse(body)), [DEMO.contractId, DEMO.otherContractId]),
    },
  ];
  for (const attempt of tries) {
    test(`"Try it out" with the pre-filled examples: ${attempt.id.replace(/^operations-/, '')} answers 200`, async (t) => {
      if (skipReason) return t.skip(skipReason);
      const { status, body, url } = await tryItOut(attempt.id);
      assert.equal(status, '200', `${url}: ${body.slice(0, 200)}`);
      assert.match(url, attempt.path);
      attempt.expect(body);
    });
  }

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
