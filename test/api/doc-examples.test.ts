import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { seedDemoChain } from '../../src/cli/demo.js';
import { loadConfig } from '../../src/config.js';
import { DEMO } from '../../src/api/schemas/examples.js';
import { idsToTry } from '../../src/store/read/demo.js';
import type { Store } from '../../src/store/store.js';
import { startTestApi, type TestApi } from '../support/api.js';
import { openTestStore, silentLogger, stopOwnCluster } from '../support/database.js';

// The parameter examples /doc shows (and its "Try it out" sends) are real: indexed from the demo chain that
// `npm start` seeds, every operation called with its examples answers 200 with the thing asked for.

after(stopOwnCluster);

interface Parameter {
  name: string;
  in: 'path' | 'query';
  description?: string;
  example?: unknown;
}

type Operations = Record<string, Record<string, { operationId: string; parameters?: Parameter[] }>>;

/**
 * An operation's URL with every parameter set to its example (arrays as repeated keys), but a query parameter
 * whose description says it is `not with` one set already (a block height or a block hash: one of the two).
 */
function exampleUrl(path: string, parameters: Parameter[]): string {
  let url = path;
  const query = new URLSearchParams();
  for (const p of parameters) {
    const excluded = /not with `([a-z_]+)`/.exec(p.description ?? '')?.[1];
    if (p.in === 'path') url = url.replace(`{${p.name}}`, encodeURIComponent(String(p.example)));
    else if (excluded === undefined || !query.has(excluded))
      for (const value of [p.example].flat()) query.append(p.name, String(value));
  }
  const search = query.toString();
  return search ? `${url}?${search}` : url;
}

describe('/doc parameter examples on the demo chain (postgres)', () => {
  let store: Store;
  let api: TestApi;
  let operations: Operations;

  before(async () => {
    store = await openTestStore('postgres');
    await seedDemoChain(store, loadConfig({}), silentLogger);
    api = await startTestApi({ store });
    await api.app.ready();
    operations = (api.app.swagger() as unknown as { paths: Operations }).paths;
  });
  after(async () => {
    await api?.close();
    await store?.close();
  });

  test('the examples name what the demo chain holds (else: the values to put in schemas/examples.ts)', async () => {
    const ids = await idsToTry(store.sql);
    const [block] = await store.sql<
      { block_hash: string; index_block_hash: string; burn_block_hash: string; burn_block_height: number }[]
    >`
      SELECT block_hash, index_block_hash, burn_block_hash, burn_block_height FROM blocks
      WHERE canonical AND block_height = ${DEMO.blockHeight}`;
    const [microblock] = await store.sql<{ microblock_hash: string }[]>`
      SELECT m.microblock_hash FROM microblocks m JOIN blocks b ON b.index_block_hash = m.index_block_hash
      WHERE b.canonical AND m.microblock_canonical
      ORDER BY m.block_height, m.microblock_sequence LIMIT 1`;
    const now = {
      blockHash: block?.block_hash,
      indexBlockHash: block?.index_block_hash,
      burnBlockHeight: block?.burn_block_height,
      burnBlockHash: block?.burn_block_hash,
      microblockHash: microblock?.microblock_hash,
      txId: ids.txId,
      otherTxId: ids.otherTxId,
      busyAddress: ids.busyAddress,
      busyTxId: ids.busyTxId,
      contractId: ids.contractId,
    };
    const expected = Object.fromEntries(Object.keys(now).map((k) => [k, DEMO[k as keyof typeof DEMO]]));
    assert.deepEqual(now, expected, `the demo chain changed: put these in src/api/schemas/examples.ts`);
  });

  test('every path and query parameter has a description and an example', () => {
    const missing: string[] = [];
    let count = 0;
    for (const [path, item] of Object.entries(operations)) {
      for (const operation of Object.values(item)) {
        for (const p of operation.parameters ?? []) {
          count++;
          if (!p.description) missing.push(`${path} ${p.name}: no description`);
          if (p.example === undefined) missing.push(`${path} ${p.name}: no example`);
        }
      }
    }
    assert.deepEqual(missing, []);
    assert.ok(count >= 20, `${count} parameters`);
  });

  test('every operation called with its examples answers 200 with what it names', async () => {
    const answers = new Map<string, { status: number; body: Record<string, unknown> }>();
    for (const [path, item] of Object.entries(operations)) {
      for (const operation of Object.values(item)) {
        const url = exampleUrl(path, operation.parameters ?? []);
        const res = await api.app.inject({ method: 'GET', url });
        answers.set(operation.operationId, { status: res.statusCode, body: res.json() });
        assert.equal(res.statusCode, 200, `${operation.operationId}: GET ${url} → ${res.body.slice(0, 200)}`);
      }
    }
    assert.ok(answers.size >= 13, `${answers.size} operations`);
    const body = (id: string) => answers.get(id)!.body;
    assert.equal(body('get_block').height, DEMO.blockHeight);
    assert.equal(body('get_block').hash, DEMO.blockHash);
    assert.equal(body('get_block_by_burn_block_height').burn_block_height, DEMO.burnBlockHeight);
    assert.equal(body('get_block_by_hash').hash, DEMO.blockHash);
    assert.equal(body('get_block_by_height').hash, DEMO.blockHash);
    assert.equal(body('get_block_by_burn_block_hash').burn_block_hash, DEMO.burnBlockHash);
    assert.equal(body('get_microblock_by_hash').microblock_hash, DEMO.microblockHash);
    assert.equal(body('get_transaction_by_id').tx_id, DEMO.txId);
    assert.deepEqual(Object.keys(body('get_tx_list_details')), [DEMO.txId, DEMO.otherTxId]);
    assert.deepEqual(
      Object.values(body('get_tx_list_details')).map((e) => (e as { found: boolean }).found),
      [true, true],
    );
    assert.equal(typeof (body('get_account_balance').stx as { balance: string }).balance, 'string');
    const single = body('get_single_transaction_with_transfers') as { tx: { tx_id: string } };
    assert.equal(single.tx.tx_id, DEMO.busyTxId);
    const status = body('get_smart_contracts_status') as Record<string, { found: boolean }>;
    assert.deepEqual(Object.keys(status), [DEMO.contractId, DEMO.otherContractId]);
    assert.ok(Object.values(status).every((s) => s.found));
    // the example token class is one the busy address holds
    const held = body('get_nft_holdings').results as { asset_identifier: string }[];
    assert.ok(held.length > 0);
    assert.ok(held.every((nft) => nft.asset_identifier === `${DEMO.contractId}::pixel-punk`));
  });
});
