import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { makeContractDeploy, privateKeyToAddress, serializeTransaction } from '@stacks/transactions';
import type { FastifyInstance } from 'fastify';
import { buildApiServer } from '../../src/api/server.js';
import { txIdFromRaw as txId } from '../../src/chain/index.js';
import { Ingestor } from '../../src/ingest/ingestor.js';
import { engines, openTestStore, silentLogger, stopOwnCluster } from '../support/database.js';

after(stopOwnCluster);

// Real signed testnet deploys, mined in /new_block messages or sent to the mempool as the node would.

const key = (n: number) => n.toString(16).padStart(2, '0').repeat(32) + '01';
const address = (n: number) => privateKeyToAddress(key(n), 'testnet');
const ZERO_HASH = '0x' + '00'.repeat(32);
const hash = (tag: number, n: number) =>
  '0x' + tag.toString(16).padStart(2, '0') + n.toString(16).padStart(62, '0');

async function deploy(sender: number, name: string, nonce: number, fee = 1000) {
  const tx = await makeContractDeploy({
    contractName: name,
    codeBody: `(define-read-only (n) u${nonce})`,
    senderKey: key(sender),
    network: 'testnet',
    fee,
    nonce,
  });
  return '0x' + serializeTransaction(tx);
}

type MinedTx = { raw: string; status?: 'success' | 'abort_by_response' | 'abort_by_post_condition' };

class Node {
  height = 0;
  private clock = Date.UTC(2024, 0, 1);
  constructor(private readonly ingestor: Ingestor) {}

  private send(path: string, body: unknown) {
    this.clock += 1000;
    return this.ingestor.apply(path, JSON.stringify(body), new Date(this.clock));
  }

  mempool(rawTxs: string[]) {
    return this.send('/new_mempool_tx', rawTxs);
  }

  block(txs: MinedTx[] = []) {
    const h = ++this.height;
    return this.send('/new_block', {
      block_hash: hash(0xbb, h),
      block_height: h,
      index_block_hash: hash(0x1b, h),
      parent_index_block_hash: h === 1 ? ZERO_HASH : hash(0x1b, h - 1),
      parent_block_hash: h === 1 ? ZERO_HASH : hash(0xbb, h - 1),
      parent_microblock: ZERO_HASH,
      parent_microblock_sequence: 0,
      burn_block_hash: hash(0xbc, h),
      burn_block_height: 100 + h,
      burn_block_time: 1_700_000_000 + h * 600,
      miner_txid: hash(0xcc, h),
      transactions: txs.map((tx, i) => ({
        txid: txId(tx.raw),
        tx_index: i,
        raw_tx: tx.raw,
        status: tx.status ?? 'success',
        raw_result: tx.status && tx.status !== 'success' ? '0x0803' : '0x0703',
        execution_cost: { read_count: 0, read_length: 0, runtime: 0, write_count: 0, write_length: 0 },
      })),
      events: [],
    });
  }
}

const STATUS = '/extended/v2/smart-contracts/status';
const query = (...ids: string[]) => `${STATUS}?${ids.map((id) => `contract_id=${id}`).join('&')}`;

async function get(app: FastifyInstance, url: string, headers: Record<string, string> = {}) {
  const res = await app.inject({ method: 'GET', url, headers });
  return { status: res.statusCode, headers: res.headers, body: res.body.length ? res.json() : null };
}

for (const engine of engines) {
  describe(`smart contract status (${engine})`, () => {
    let store: Awaited<ReturnType<typeof openTestStore>>;
    let app: FastifyInstance;
    let node: Node;

    const ALICE = address(1);
    const BOB = address(2);
    const ids = {
      success: `${ALICE}.token`,
      failed: `${ALICE}.broken`,
      redeployed: `${ALICE}.retry`,
      pending: `${BOB}.queued`,
      minedAndPending: `${BOB}.raced`,
      unknown: `${BOB}.no-such-contract`,
    };
    const txs: Record<string, string> = {};

    test('set up: deploys mined in blocks 1 and 2, others in the mempool', async () => {
      store = await openTestStore(engine);
      node = new Node(new Ingestor(store, { isMainnet: false, logger: silentLogger }));
      app = await buildApiServer({ store, logger: silentLogger, apiVersion: 'test' });

      txs.success = await deploy(1, 'token', 0);
      txs.failed = await deploy(1, 'broken', 1);
      txs.retryFailed = await deploy(1, 'retry', 2);
      txs.retryOk = await deploy(1, 'retry', 3);
      await node.block([
        { raw: txs.success },
        { raw: txs.failed, status: 'abort_by_response' },
        { raw: txs.retryFailed, status: 'abort_by_post_condition' },
      ]);
      txs.raced = await deploy(2, 'raced', 0);
      await node.block([{ raw: txs.retryOk }, { raw: txs.raced }]);
      // pending deploys of one id: the nonce-6 tx arrives first, the nonce-5 one (lower) must win
      txs.pending6 = await deploy(2, 'queued', 6, 5000);
      txs.pending5 = await deploy(2, 'queued', 5, 10);
      txs.racedAgain = await deploy(2, 'raced', 7);
      await node.mempool([txs.pending6]);
      await node.mempool([txs.pending5, txs.racedAgain]);
    });

    test('a confirmed successful deploy', async () => {
      const res = await get(app, query(ids.success));
      assert.equal(res.status, 200);
      assert.deepEqual(res.body, {
        [ids.success]: {
          found: true,
          result: { status: 'success', tx_id: txId(txs.success), contract_id: ids.success, block_height: 1 },
        },
      });
    });

    test('a confirmed failed deploy is found, with its status', async () => {
      const res = await get(app, query(ids.failed));
      assert.deepEqual(res.body[ids.failed], {
        found: true,
        result: {
          status: 'abort_by_response',
          tx_id: txId(txs.failed),
          contract_id: ids.failed,
          block_height: 1,
        },
      });
    });

    test('the latest canonical deploy wins over an earlier failed one', async () => {
      const res = await get(app, query(ids.redeployed));
      assert.deepEqual(res.body[ids.redeployed].result, {
        status: 'success',
        tx_id: txId(txs.retryOk),
        contract_id: ids.redeployed,
        block_height: 2,
      });
    });

    test('pending only: the mempool deploy with the lowest nonce, without block_height', async () => {
      const res = await get(app, query(ids.pending));
      assert.deepEqual(res.body, {
        [ids.pending]: {
          found: true,
          result: { status: 'pending', tx_id: txId(txs.pending5), contract_id: ids.pending },
        },
      });
      assert.equal('block_height' in res.body[ids.pending].result, false);
    });

    test('a mined deploy wins over a pending one', async () => {
      const res = await get(app, query(ids.minedAndPending));
      assert.equal(res.body[ids.minedAndPending].result.status, 'success');
      assert.equal(res.body[ids.minedAndPending].result.tx_id, txId(txs.raced));
    });

    test('an unknown contract: found false, no result', async () => {
      const res = await get(app, query(ids.unknown));
      assert.deepEqual(res.body, { [ids.unknown]: { found: false } });
    });

    test('several ids: one entry each in request order; duplicates collapse', async () => {
      const res = await get(app, query(ids.unknown, ids.success, ids.pending, ids.success, ids.unknown));
      assert.equal(res.status, 200);
      assert.deepEqual(Object.keys(res.body), [ids.unknown, ids.success, ids.pending]);
      assert.equal(res.body[ids.success].found, true);
      assert.equal(res.body[ids.pending].result.status, 'pending');
      assert.deepEqual(res.body[ids.unknown], { found: false });
    });

    test('malformed ids: 400 (upstream’s schema message where it has one)', async () => {
      const bad = await get(app, `${STATUS}?contract_id=bad`);
      assert.equal(bad.status, 400);
      const pattern = '"^[0123456789ABCDEFGHJKMNPQRSTVWXYZ]{28,41}.[a-zA-Z]([a-zA-Z0-9]|[-_]){0,39}$"';
      assert.deepEqual(bad.body, {
        statusCode: 400,
        code: 'FST_ERR_VALIDATION',
        error: 'Bad Request',
        message: `querystring/contract_id/0 must match pattern ${pattern}, querystring/contract_id must match pattern ${pattern}, querystring/contract_id must match a schema in anyOf`,
      });
      const missing = await get(app, STATUS);
      assert.equal(missing.status, 400);
      assert.equal(missing.body.message, "querystring must have required property 'contract_id'");

      // commas do not separate ids: the whole value is one (invalid) id
      const commas = await get(app, `${STATUS}?contract_id=${ids.success},${ids.failed}`);
      assert.equal(commas.status, 400);

      // passes upstream's loose pattern (its `.` matches any character) but is no contract id
      const noDot = `${ALICE}-token`;
      const loose = await get(app, query(noDot));
      assert.equal(loose.status, 400);
      assert.equal(loose.body.error, 'Bad Request');
      assert.match(loose.body.message, new RegExp(`"${noDot}" is not a contract id`));

      // a c32 address whose checksum is wrong
      const badChecksum = `${ALICE.slice(0, -1)}${ALICE.endsWith('A') ? 'B' : 'A'}.token`;
      const checksum = await get(app, query(ids.success, badChecksum));
      assert.equal(checksum.status, 400);
      assert.match(checksum.body.message, /is not a contract id/);
      assert.equal(checksum.headers.etag, undefined, 'errors carry no ETag');
    });

    test('at most 50 distinct ids per request', async () => {
      const many = Array.from({ length: 51 }, (_, i) => `${BOB}.c${i}`);
      const over = await get(app, query(...many));
      assert.equal(over.status, 400);
      assert.equal(
        over.body.message,
        'querystring/contract_id: at most 50 distinct contract ids per request, got 51',
      );
      const fifty = await get(app, query(...many.slice(0, 50), ...many.slice(0, 50)));
      assert.equal(fifty.status, 200);
      assert.equal(Object.keys(fifty.body).length, 50);
    });

    test('the chain tip ETag: a mempool deploy keeps it, a block changes it', async () => {
      const first = await get(app, query(ids.success));
      assert.equal(first.headers.etag, `"${hash(0x1b, node.height)}"`);
      assert.equal(first.headers['cache-control'], 'public, no-cache, must-revalidate');
      const tag = String(first.headers.etag);

      const cached = await app.inject({
        method: 'GET',
        url: query(ids.success),
        headers: { 'if-none-match': tag },
      });
      assert.equal(cached.statusCode, 304);
      assert.equal(cached.body, '');

      await node.mempool([await deploy(3, 'late', 0)]);
      assert.equal((await get(app, query(`${address(3)}.late`))).headers.etag, tag);

      await node.block();
      const after = await get(app, query(ids.success), { 'if-none-match': tag });
      assert.equal(after.status, 200);
      assert.equal(after.headers.etag, `"${hash(0x1b, node.height)}"`);
    });

    test('tear down', async () => {
      await app.close();
      await store.close();
    });
  });

  describe(`smart contract status on an empty chain (${engine})`, () => {
    test('no ETag before the first block', async () => {
      const store = await openTestStore(engine);
      const app = await buildApiServer({ store, logger: silentLogger, apiVersion: 'test' });
      try {
        const res = await get(app, query(`${address(1)}.token`));
        assert.equal(res.status, 200);
        assert.deepEqual(res.body, { [`${address(1)}.token`]: { found: false } });
        assert.equal(res.headers.etag, undefined);
        assert.equal(res.headers['cache-control'], 'no-store');
      } finally {
        await app.close();
        await store.close();
      }
    });
  });
}
