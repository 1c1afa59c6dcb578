import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { addressOf, deployTx, type BuiltTx, type KeyName } from '../support/chain.js';
import { silentLogger, stopOwnCluster } from '../support/database.js';
import { testEngines } from '../support/engines.js';
import { buildApiServer } from '../../src/api/server.js';
import { DEMO } from '../../src/api/schemas/examples.js';
import { API_VERSION, getJson as get, startTestApi, withApi, type TestApi } from '../support/api.js';

after(stopOwnCluster);

// Real signed testnet deploys, mined in /new_block messages or sent to the mempool as the node would.

const deploy = (from: KeyName, name: string, nonce: number, fee = 1000) =>
  deployTx({ from, name, nonce, fee, code: `(define-read-only (n) u${nonce})` });

const STATUS = '/extended/v2/smart-contracts/status';
const query = (...ids: string[]) => `${STATUS}?${ids.map((id) => `contract_id=${id}`).join('&')}`;

for (const engine of testEngines(import.meta.url)) {
  describe(`smart contract status (${engine})`, () => {
    let api: TestApi;
    let app: FastifyInstance;

    const ALICE = addressOf('alice');
    const BOB = addressOf('bob');
    const ids = {
      success: `${ALICE}.token`,
      failed: `${ALICE}.broken`,
      redeployed: `${ALICE}.retry`,
      pending: `${BOB}.queued`,
      minedAndPending: `${BOB}.raced`,
      unknown: `${BOB}.no-such-contract`,
    };
    const txs: Record<string, BuiltTx> = {};

    test('set up: deploys mined in blocks 1 and 2, others in the mempool', async () => {
      api = await startTestApi({ engine });
      app = api.app;
      const { chain } = api;

      txs.success = await deploy('alice', 'token', 0);
      txs.failed = await deploy('alice', 'broken', 1);
      txs.retryFailed = await deploy('alice', 'retry', 2);
      txs.retryOk = await deploy('alice', 'retry', 3);
      await chain.block({
        txs: [
          { tx: txs.success },
          { tx: txs.failed, status: 'abort_by_response' },
          { tx: txs.retryFailed, status: 'abort_by_post_condition' },
        ],
      });
      txs.raced = await deploy('bob', 'raced', 0);
      await chain.block({ txs: [{ tx: txs.retryOk }, { tx: txs.raced }] });
      // pending deploys of one id: the nonce-6 tx arrives first, the nonce-5 one (lower) must win
      txs.pending6 = await deploy('bob', 'queued', 6, 5000);
      txs.pending5 = await deploy('bob', 'queued', 5, 10);
      txs.racedAgain = await deploy('bob', 'raced', 7);
      await chain.mempool([txs.pending6]);
      await chain.mempool([txs.pending5, txs.racedAgain]);
    });

    test('a confirmed successful deploy', async () => {
      const res = await get(app, query(ids.success));
      assert.equal(res.status, 200);
      assert.deepEqual(res.body, {
        [ids.success]: {
          found: true,
          result: { status: 'success', tx_id: txs.success.txid, contract_id: ids.success, block_height: 1 },
        },
      });
    });

    test('a confirmed failed deploy is found, with its status', async () => {
      const res = await get(app, query(ids.failed));
      assert.deepEqual(res.body[ids.failed], {
        found: true,
        result: {
          status: 'abort_by_response',
          tx_id: txs.failed.txid,
          contract_id: ids.failed,
          block_height: 1,
        },
      });
    });

    test('the latest canonical deploy wins over an earlier failed one', async () => {
      const res = await get(app, query(ids.redeployed));
      assert.deepEqual(res.body[ids.redeployed].result, {
        status: 'success',
        tx_id: txs.retryOk.txid,
        contract_id: ids.redeployed,
        block_height: 2,
      });
    });

    test('pending only: the mempool deploy with the lowest nonce, without block_height', async () => {
      const res = await get(app, query(ids.pending));
      assert.deepEqual(res.body, {
        [ids.pending]: {
          found: true,
          result: { status: 'pending', tx_id: txs.pending5.txid, contract_id: ids.pending },
        },
      });
      assert.equal('block_height' in res.body[ids.pending].result, false);
    });

    test('a mined deploy wins over a pending one', async () => {
      const res = await get(app, query(ids.minedAndPending));
      assert.equal(res.body[ids.minedAndPending].result.status, 'success');
      assert.equal(res.body[ids.minedAndPending].result.tx_id, txs.raced.txid);
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

    test('malformed ids: 400 saying what a contract id is', async () => {
      const bad = await get(app, `${STATUS}?contract_id=bad`);
      assert.equal(bad.status, 400);
      const contractIds = `one or more contract ids (<stacks address>.<contract name>, e.g. ${DEMO.contractId})`;
      assert.deepEqual(bad.body, {
        statusCode: 400,
        code: 'FST_ERR_VALIDATION',
        error: 'Bad Request',
        message: `query parameter contract_id must be ${contractIds}; got "bad"`,
      });
      const missing = await get(app, STATUS);
      assert.equal(missing.status, 400);
      assert.equal(missing.body.message, `query parameter contract_id is required: ${contractIds}`);

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
        'query parameter contract_id must name at most 50 distinct contract ids; got 51',
      );
      const fifty = await get(app, query(...many.slice(0, 50), ...many.slice(0, 50)));
      assert.equal(fifty.status, 200);
      assert.equal(Object.keys(fifty.body).length, 50);
    });

    test('the chain tip ETag: a mempool deploy keeps it, a block changes it', async () => {
      const first = await get(app, query(ids.success));
      assert.equal(first.headers.etag, `"${api.chain.tip!.index_block_hash}"`);
      assert.equal(first.headers['cache-control'], 'public, no-cache, must-revalidate');
      const tag = String(first.headers.etag);

      const cached = await app.inject({
        method: 'GET',
        url: query(ids.success),
        headers: { 'if-none-match': tag },
      });
      assert.equal(cached.statusCode, 304);
      assert.equal(cached.body, '');

      // asked (and its answer cached) before the deploy reaches the mempool: the pending deploy still shows
      const late = `${addressOf('carol')}.late`;
      const before = await get(app, query(late));
      assert.deepEqual(before.body, { [late]: { found: false } });
      assert.deepEqual((await get(app, query(late))).body, before.body);
      const lateTx = await deploy('carol', 'late', 0);
      await api.chain.mempool([lateTx]);
      const pending = await get(app, query(late));
      assert.equal(pending.headers.etag, tag);
      assert.deepEqual(pending.body, {
        [late]: { found: true, result: { status: 'pending', tx_id: lateTx.txid, contract_id: late } },
      });

      await api.chain.block();
      const after = await get(app, query(ids.success), { 'if-none-match': tag });
      assert.equal(after.status, 200);
      assert.equal(after.headers.etag, `"${api.chain.tip!.index_block_hash}"`);
    });

    test('5 ids: the cached answer equals a fresh server’s; a bad id list is a 400 even under the current ETag', async () => {
      const five = query(ids.success, ids.failed, ids.redeployed, ids.pending, ids.unknown);
      const first = await app.inject({ method: 'GET', url: five });
      const cached = await app.inject({ method: 'GET', url: five });
      const fresh = await buildApiServer({ apiVersion: API_VERSION, store: api.store, logger: silentLogger });
      try {
        const other = await fresh.inject({ method: 'GET', url: five });
        assert.equal(first.statusCode, 200);
        assert.deepEqual(Object.keys(first.json()), [
          ids.success,
          ids.failed,
          ids.redeployed,
          ids.pending,
          ids.unknown,
        ]);
        assert.equal(cached.body, first.body);
        assert.equal(cached.body, other.body, 'cached = fresh');
        for (const header of [
          'etag',
          'cache-control',
          'content-type',
          'x-api-version',
          'access-control-allow-origin',
        ]) {
          assert.equal(cached.headers[header], other.headers[header], header);
        }
      } finally {
        await fresh.close();
      }
      const tag = String(first.headers.etag);
      const notModified = await app.inject({ method: 'GET', url: five, headers: { 'if-none-match': tag } });
      assert.equal(notModified.statusCode, 304);
      // the cached list with one bad id more: validated, the same 400 with or without the tag the client holds
      const badChecksum = `${ALICE.slice(0, -1)}${ALICE.endsWith('A') ? 'B' : 'A'}.token`;
      const bad = `${five}&contract_id=${badChecksum}`;
      const plain = await get(app, bad);
      const withTag = await get(app, bad, { 'if-none-match': tag });
      assert.equal(plain.status, 400);
      assert.deepEqual(withTag.body, plain.body);
      assert.equal(
        plain.body.message,
        `query parameter contract_id must be contract ids: "${badChecksum}" is not a contract id (expected <stacks address>.<contract name>, e.g. ${DEMO.contractId})`,
      );
    });

    test('tear down', async () => {
      await api.close();
    });
  });

  describe(`smart contract status on an empty chain (${engine})`, () => {
    test('no ETag before the first block', async () => {
      await withApi(engine, async ({ app }) => {
        const id = `${addressOf('alice')}.token`;
        const res = await get(app, query(id));
        assert.equal(res.status, 200);
        assert.deepEqual(res.body, { [id]: { found: false } });
        assert.equal(res.headers.etag, undefined);
        assert.equal(res.headers['cache-control'], 'no-store');
      });
    });
  });
}
