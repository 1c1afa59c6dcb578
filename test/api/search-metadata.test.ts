import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import {
  addressOf,
  deployTx,
  ev,
  transferTx,
  transferWithEvent,
  type BuiltTx,
  type ChainBlock,
} from '../support/chain.js';
import { stopOwnCluster } from '../support/database.js';
import { testEngines } from '../support/engines.js';
import { get, startTestApi, type TestApi } from '../support/api.js';

after(stopOwnCluster);

// GET /extended/v1/search/{id}?include_metadata=true (docs/upstream.md C.17): the goldens hold no such path, so
// each kind of entity is asked on a chain built here, and its `metadata` is compared, as JSON text (key order
// included), with what the entity's own route answers.

const SEARCH = '/extended/v1/search';
const ALICE = addressOf('alice');
const BOB = addressOf('bob');
const CAROL = addressOf('carol');

/** The raw `result.metadata` text of an answer: what follows `"metadata":`, up to the answer's closing braces. */
function metadataText(body: string): string {
  const at = body.indexOf('"metadata":');
  assert.ok(at > 0, `no metadata in ${body.slice(0, 200)}`);
  assert.ok(body.endsWith('}}'));
  return body.slice(at + '"metadata":'.length, -2);
}

for (const engine of testEngines(import.meta.url)) {
  describe(`search with include_metadata (${engine})`, () => {
    let api: TestApi;
    let app: FastifyInstance;
    const txs: Record<string, BuiltTx> = {};
    let block1: ChainBlock;
    let orphan: ChainBlock;

    const search = async (id: string, query = '?include_metadata=true') => {
      const res = await get(app, `${SEARCH}/${id}${query}`);
      return { status: res.statusCode, text: res.body, body: res.json() };
    };
    const text = async (url: string) => {
      const res = await get(app, url);
      assert.equal(res.statusCode, 200, url);
      return res.body;
    };

    test('set up: mined txs and a deploy, an orphaned block, an unconfirmed microblock, a mempool', async () => {
      api = await startTestApi({ engine });
      app = api.app;
      const { chain } = api;
      txs.transfer = await transferTx({ from: 'alice', to: BOB, amount: 700, fee: 300, nonce: 0 });
      txs.deploy = await deployTx({
        from: 'alice',
        name: 'counter',
        nonce: 1,
        fee: 500,
        code: '(define-data-var n uint u0)',
      });
      block1 = await chain.block({
        txs: [
          { tx: txs.transfer, events: [ev.stxMint(ALICE, 10_000), ev.stxTransfer(ALICE, BOB, 700)] },
          { tx: txs.deploy },
        ],
      });
      const block2 = await chain.block();
      // a sibling of block 2, orphaned
      orphan = await chain.block({ parent: block1 });
      await chain.block({ parent: block2 });
      // an unconfirmed microblock pays carol: the search's balance counts it, an anchored read does not
      txs.streamed = (await transferWithEvent({ from: 'bob', to: CAROL, amount: 40, fee: 10, nonce: 0 })).tx;
      await chain.microblock({
        txs: [{ tx: txs.streamed, events: [ev.stxTransfer(BOB, CAROL, 40)] }],
      });
      txs.pending = await transferTx({ from: 'carol', to: ALICE, amount: 5, fee: 200, nonce: 0 });
      txs.pendingDeploy = await deployTx({
        from: 'bob',
        name: 'queued',
        nonce: 1,
        fee: 900,
        code: '(define-data-var m uint u1)',
      });
      txs.dropped = await transferTx({ from: 'carol', to: BOB, amount: 6, fee: 100, nonce: 1 });
      await chain.mempool([txs.pending, txs.pendingDeploy, txs.dropped]);
      await chain.drop([txs.dropped.txid]);
    });

    test('a mined tx: the tx as GET /extended/v1/tx lists it (no events), and tx_data from it', async () => {
      const found = await search(txs.transfer.txid);
      assert.equal(found.status, 200);
      assert.deepEqual(found.body.result.tx_data, {
        canonical: true,
        block_hash: block1.block_hash,
        burn_block_time: block1.burn_block_time,
        block_height: 1,
        tx_type: 'token_transfer',
      });
      const list = JSON.parse(await text('/extended/v1/tx?limit=50')) as { results: { tx_id: string }[] };
      const listed = list.results.find((t) => t.tx_id === txs.transfer.txid);
      assert.equal(metadataText(found.text), JSON.stringify(listed));
      const metadata = found.body.result.metadata;
      assert.equal(metadata.tx_id, txs.transfer.txid);
      assert.equal(metadata.sender_address, ALICE);
      assert.deepEqual(metadata.token_transfer.amount, '700');
      assert.equal(metadata.event_count, 2);
      assert.deepEqual(metadata.events, []);
      // without metadata, the same answer less the member
      const plain = await search(txs.transfer.txid.slice(2).toUpperCase(), '');
      const { metadata: _, ...described } = found.body.result;
      assert.deepEqual(plain.body, { found: true, result: described });
      assert.equal((await search(txs.transfer.txid, '?include_metadata=false')).text, plain.text);
    });

    test('a tx of an unconfirmed microblock: found mined, at the tip + 1, with "0x" for its block hash', async () => {
      const found = await search(txs.streamed.txid);
      assert.equal(found.body.result.entity_type, 'tx_id');
      assert.deepEqual(found.body.result.tx_data, {
        canonical: true,
        block_hash: '0x',
        burn_block_time: found.body.result.metadata.burn_block_time,
        block_height: 4,
        tx_type: 'token_transfer',
      });
      assert.equal(found.body.result.metadata.is_unanchored, true);
      assert.deepEqual(found.body.result.metadata.events, []);
    });

    test('a pending tx: the mempool tx as GET /extended/v1/tx/{id} answers it', async () => {
      const found = await search(txs.pending.txid);
      assert.equal(found.status, 200);
      assert.deepEqual(found.body.result.tx_data, { tx_type: 'token_transfer' });
      assert.equal(metadataText(found.text), await text(`/extended/v1/tx/${txs.pending.txid}`));
      assert.equal(found.body.result.metadata.tx_status, 'pending');
      assert.equal(found.body.result.metadata.fee_rate, '200');
    });

    test('a dropped tx is found with metadata (as the original reads the mempool then), not without', async () => {
      const found = await search(txs.dropped.txid);
      assert.equal(found.status, 200);
      assert.equal(found.body.result.entity_type, 'mempool_tx_id');
      assert.equal(found.body.result.metadata.tx_status, 'dropped_stale_garbage_collect');
      assert.equal(metadataText(found.text), await text(`/extended/v1/tx/${txs.dropped.txid}`));
      const plain = await search(txs.dropped.txid, '');
      assert.equal(plain.status, 404);
      assert.equal(plain.body.result.entity_type, 'unknown_hash');
    });

    test('a block: the v1 block as GET /extended/v1/block/by_burn_block_height answers it', async () => {
      const found = await search(block1.block_hash);
      assert.equal(found.status, 200);
      assert.equal(found.body.result.entity_type, 'block_hash');
      assert.deepEqual(found.body.result.block_data, {
        canonical: true,
        hash: block1.block_hash,
        parent_block_hash: '0x' + '0'.repeat(64),
        burn_block_time: block1.burn_block_time,
        height: 1,
      });
      const byBurnHeight = await text(`/extended/v1/block/by_burn_block_height/${block1.burn_block_height}`);
      assert.equal(metadataText(found.text), byBurnHeight);
      assert.deepEqual(found.body.result.metadata.txs, [txs.deploy.txid, txs.transfer.txid]);
    });

    test('an orphaned block: not canonical, no txs', async () => {
      const found = await search(orphan.block_hash);
      assert.equal(found.body.result.block_data.canonical, false);
      assert.equal(found.body.result.metadata.canonical, false);
      assert.equal(found.body.result.metadata.height, 2);
      assert.equal(found.body.result.metadata.hash, orphan.block_hash);
      assert.deepEqual(found.body.result.metadata.txs, []);
    });

    test('a contract: its mined deploy tx (no events); a pending deploy: the mempool tx', async () => {
      const mined = await search(`${ALICE}.counter`);
      assert.equal(mined.status, 200);
      assert.deepEqual(mined.body.result.tx_data, {
        tx_type: 'smart_contract',
        tx_id: txs.deploy.txid,
        canonical: true,
        block_hash: block1.block_hash,
        burn_block_time: block1.burn_block_time,
        block_height: 1,
      });
      const list = JSON.parse(await text('/extended/v1/tx?limit=50')) as { results: { tx_id: string }[] };
      const listed = list.results.find((t) => t.tx_id === txs.deploy.txid);
      assert.equal(metadataText(mined.text), JSON.stringify(listed));
      assert.equal(mined.body.result.metadata.smart_contract.contract_id, `${ALICE}.counter`);

      const pending = await search(`${BOB}.queued`);
      assert.deepEqual(pending.body.result.tx_data, {
        tx_type: 'smart_contract',
        tx_id: txs.pendingDeploy.txid,
      });
      assert.equal(metadataText(pending.text), await text(`/extended/v1/tx/${txs.pendingDeploy.txid}`));
      assert.equal(pending.body.result.metadata.tx_status, 'pending');
    });

    test('an address: its STX balance with the unconfirmed microblock, without pending totals', async () => {
      const found = await search(CAROL);
      assert.equal(found.status, 200);
      assert.equal(found.body.result.entity_type, 'standard_address');
      // keys and order of the original's AddressStxBalance as its search fills it
      assert.equal(
        metadataText(found.text),
        JSON.stringify({
          balance: '40',
          total_miner_rewards_received: '0',
          lock_tx_id: '',
          locked: '0',
          lock_height: 0,
          burnchain_lock_height: 0,
          burnchain_unlock_height: 0,
          total_sent: '0',
          total_received: '40',
          total_fees_sent: '0',
        }),
      );
      // the same values as the unanchored stx route, which adds the pending totals (carol sends 5 + 200 fee)
      const stx = JSON.parse(await text(`/extended/v1/address/${CAROL}/stx?unanchored=true`));
      assert.equal(stx.balance, '40');
      assert.equal(stx.pending_balance_outbound, '205');
      // an anchored read does not see the microblock
      assert.equal(JSON.parse(await text(`/extended/v1/address/${CAROL}/stx`)).balance, '0');

      const alice = await search(ALICE);
      assert.equal(alice.body.result.metadata.balance, String(10_000 - 700 - 300 - 500));
      assert.equal(alice.body.result.metadata.total_fees_sent, '800');
    });

    test('not found: the same 404 with or without metadata', async () => {
      const unknown = await search('0x' + 'ab'.repeat(32));
      assert.equal(unknown.status, 404);
      assert.equal(unknown.text, (await search('0x' + 'ab'.repeat(32), '')).text);
      assert.equal((await search(`${BOB}.no-such`)).status, 404);
    });

    test('include_metadata is true or false, as in the original: else a 400 (in words, C.0)', async () => {
      for (const value of ['1', 'yes']) {
        const res = await search(txs.transfer.txid, `?include_metadata=${value}`);
        assert.equal(res.status, 400, value);
        assert.deepEqual(res.body, {
          statusCode: 400,
          code: 'FST_ERR_VALIDATION',
          error: 'Bad Request',
          message: `query parameter include_metadata must be true or false; got "${value}"`,
        });
      }
      await api.close();
    });
  });
}
