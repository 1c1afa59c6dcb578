import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { MAX_MULTIPLE_TX_IDS } from '../../src/api/schemas/params.js';
import { Cl } from '@stacks/transactions';
import { addressOf, callTx, ev, transferWithEvent, type MinedTx } from '../support/chain.js';
import { stopOwnCluster } from '../support/database.js';
import { testEngines } from '../support/engines.js';
import { get, withApi } from '../support/api.js';

after(stopOwnCluster);

const UNKNOWN = '0x' + 'ab'.repeat(32);
const MEMO_NONE = '0x' + '00'.repeat(34);
const SENDER = addressOf('alice');
const RECIPIENT = addressOf('bob');

/** A transfer of 1000 µSTX from SENDER to RECIPIENT, with its stx transfer event for when it is mined. */
const transfer = (nonce: number, fee = 180) =>
  transferWithEvent({ from: 'alice', to: RECIPIENT, amount: 1000, fee, nonce });

/** A transfer with three events: its stx transfer and two contract logs (u7, u8). */
async function transferWithLogs(nonce: number): Promise<MinedTx> {
  const mined = await transfer(nonce);
  mined.events!.push(ev.print(`${SENDER}.logger`, Cl.uint(7)), ev.print(`${SENDER}.logger`, Cl.uint(8)));
  return mined;
}

for (const engine of testEngines(import.meta.url)) {
  describe(`GET /extended/v1/tx/:tx_id (${engine})`, () => {
    test('a mined tx: every field, and its events paged by event_index', async () => {
      await withApi(engine, async ({ app, chain }) => {
        const mined = await transferWithLogs(0);
        const { tx } = mined;
        const block = await chain.block({ txs: [mined] });
        const res = await get(app, `/extended/v1/tx/${tx.txid}`);
        assert.equal(res.statusCode, 200);
        assert.equal(res.headers.warning, undefined, 'not deprecated (contract §9)');
        const body = res.json();
        assert.deepEqual(Object.keys(body), [
          'tx_id',
          'nonce',
          'fee_rate',
          'sender_address',
          'sponsored',
          'post_condition_mode',
          'post_conditions',
          'anchor_mode',
          'block_hash',
          'block_height',
          'block_time',
          'block_time_iso',
          'burn_block_time',
          'burn_block_height',
          'burn_block_time_iso',
          'parent_burn_block_time',
          'parent_burn_block_time_iso',
          'canonical',
          'tx_index',
          'tx_status',
          'tx_result',
          'event_count',
          'parent_block_hash',
          'is_unanchored',
          'microblock_hash',
          'microblock_sequence',
          'microblock_canonical',
          'execution_cost_read_count',
          'execution_cost_read_length',
          'execution_cost_runtime',
          'execution_cost_write_count',
          'execution_cost_write_length',
          'vm_error',
          'events',
          'tx_type',
          'token_transfer',
        ]);
        assert.equal(body.tx_id, tx.txid);
        assert.equal(body.nonce, 0);
        assert.equal(body.fee_rate, '180');
        assert.equal(body.sender_address, SENDER);
        assert.equal(body.sponsored, false);
        assert.equal(body.anchor_mode, 'any');
        assert.equal(body.block_hash, block.block_hash);
        assert.equal(body.block_height, 1);
        assert.equal(body.block_time, block.burn_block_time);
        assert.equal(body.block_time_iso, new Date(block.burn_block_time * 1000).toISOString());
        assert.equal(body.burn_block_height, block.burn_block_height);
        assert.equal(body.canonical, true);
        assert.equal(body.tx_status, 'success');
        assert.deepEqual(body.tx_result, { hex: '0x0703', repr: '(ok true)' });
        assert.equal(body.event_count, 3);
        assert.equal(body.is_unanchored, false);
        assert.equal(body.microblock_hash, '0x');
        assert.equal(body.microblock_sequence, 2147483647);
        assert.equal(body.execution_cost_write_length, 5);
        assert.equal(body.vm_error, null);
        assert.deepEqual(body.token_transfer, {
          recipient_address: RECIPIENT,
          amount: '1000',
          memo: MEMO_NONE,
        });
        assert.deepEqual(body.events[0], {
          event_index: 0,
          event_type: 'stx_asset',
          tx_id: tx.txid,
          asset: { asset_event_type: 'transfer', sender: SENDER, recipient: RECIPIENT, amount: '1000' },
        });
        assert.deepEqual(
          body.events.map((e: { event_index: number }) => e.event_index),
          [0, 1, 2],
        );

        const page = (await get(app, `/extended/v1/tx/${tx.txid}?event_offset=1&event_limit=1`)).json();
        assert.equal(page.event_count, 3);
        assert.deepEqual(page.events, [
          {
            event_index: 1,
            event_type: 'smart_contract_log',
            tx_id: tx.txid,
            contract_log: {
              contract_id: `${SENDER}.logger`,
              topic: 'print',
              value: { hex: '0x0100000000000000000000000000000007', repr: 'u7' },
            },
          },
        ]);
        const past = (await get(app, `/extended/v1/tx/${tx.txid}?event_offset=3`)).json();
        assert.deepEqual(past.events, []);
        // event_limit=0 means the default page, as upstream.
        const zero = (await get(app, `/extended/v1/tx/${tx.txid}?event_limit=0`)).json();
        assert.equal(zero.events.length, 3);
        // Upper-case hex finds the same tx; the answer names it in lower case.
        const upper = await get(app, `/extended/v1/tx/0x${tx.txid.slice(2).toUpperCase()}`);
        assert.equal(upper.statusCode, 200);
        assert.equal(upper.json().tx_id, tx.txid);
      });
    });

    test('an id without 0x is redirected (302) with its query string', async () => {
      await withApi(engine, async ({ app, chain }) => {
        const mined = await transfer(0);
        const { tx } = mined;
        await chain.block({ txs: [mined] });
        const bare = tx.txid.slice(2);
        const res = await get(app, `/extended/v1/tx/${bare}?event_limit=1&unanchored=true`);
        assert.equal(res.statusCode, 302);
        assert.equal(res.headers.location, `/extended/v1/tx/${tx.txid}?event_limit=1&unanchored=true`);
        assert.equal(
          (await get(app, `/extended/v1/tx/${bare}`)).headers.location,
          `/extended/v1/tx/${tx.txid}`,
        );
        const followed = await get(app, String(res.headers.location));
        assert.equal(followed.statusCode, 200);
        assert.equal(followed.json().events.length, 1);
      });
    });

    test('a tx rendered before a reorg answers as its row visible now: orphaned, mined again elsewhere', async () => {
      await withApi(engine, async ({ app, chain }) => {
        const b1 = await chain.block();
        const mined = await transfer(0, 250);
        const { tx } = mined;
        await chain.mempool([tx]);
        const a2 = await chain.block({ txs: [mined] });
        const before = (await get(app, `/extended/v1/tx/${tx.txid}`)).json();
        assert.equal(before.block_hash, a2.block_hash);
        assert.equal(before.canonical, true);
        // twice: the second answer is the cached rendering, the same
        assert.deepEqual((await get(app, `/extended/v1/tx/${tx.txid}`)).json(), before);
        const first = (await get(app, `/extended/v1/tx/multiple?tx_id=${tx.txid}`)).json();
        assert.deepEqual(first, { [tx.txid]: { found: true, result: before } });

        // fork b wins without the tx: back in the mempool, pending
        const b2 = await chain.block({ parent: b1 });
        await chain.block({ parent: b2 });
        const orphaned = await get(app, `/extended/v1/tx/${tx.txid}`);
        assert.equal(orphaned.statusCode, 200);
        assert.equal(orphaned.json().tx_status, 'pending');
        assert.equal(orphaned.json().block_hash, undefined);

        // mined again on fork b: the new block's row (tx/multiple shares the cached renderings)
        const b4 = await chain.block({ txs: [mined] });
        const multiple = (
          await get(app, `/extended/v1/tx/multiple?tx_id=${tx.txid}&tx_id=${UNKNOWN}`)
        ).json();
        assert.equal(multiple[tx.txid].result.block_hash, b4.block_hash);
        assert.deepEqual(multiple[UNKNOWN], { found: false, result: { tx_id: UNKNOWN } });
        const again = (await get(app, `/extended/v1/tx/${tx.txid}`)).json();
        assert.deepEqual(multiple[tx.txid], { found: true, result: again });
        assert.equal(again.block_hash, b4.block_hash);
        assert.equal(again.block_height, 4);
        assert.equal(again.canonical, true);
        assert.deepEqual((await get(app, `/extended/v1/tx/${tx.txid}`)).json(), again);
      });
    });

    test('a tx only in the mempool is a pending mempool tx; unknown ids are 404', async () => {
      await withApi(engine, async ({ app, chain }) => {
        await chain.block();
        const { tx } = await transfer(0, 250);
        const at = await chain.mempool([tx]);
        const res = await get(app, `/extended/v1/tx/${tx.txid}`);
        assert.equal(res.statusCode, 200);
        const receipt = Math.floor(at.getTime() / 1000);
        assert.deepEqual(res.json(), {
          tx_id: tx.txid,
          nonce: 0,
          fee_rate: '250',
          sender_address: SENDER,
          sponsored: false,
          post_condition_mode: 'deny',
          post_conditions: [],
          anchor_mode: 'any',
          tx_status: 'pending',
          replaced_by_tx_id: null,
          receipt_time: receipt,
          receipt_time_iso: new Date(receipt * 1000).toISOString(),
          tx_type: 'token_transfer',
          token_transfer: { recipient_address: RECIPIENT, amount: '1000', memo: MEMO_NONE },
        });

        const missing = await get(app, `/extended/v1/tx/${UNKNOWN}`);
        assert.equal(missing.statusCode, 404);
        assert.deepEqual(missing.json(), {
          statusCode: 404,
          error: 'Not Found',
          message: 'could not find transaction by ID',
        });
        assert.equal(missing.headers.etag, undefined);
        assert.equal(missing.headers['cache-control'], 'no-store');
      });
    });

    test('dropped mempool txs keep their drop status and replacement', async () => {
      await withApi(engine, async ({ app, chain }) => {
        await chain.block();
        const reasons: [string, string][] = [
          ['ReplaceByFee', 'dropped_replace_by_fee'],
          ['ReplaceAcrossFork', 'dropped_replace_across_fork'],
          ['TooExpensive', 'dropped_too_expensive'],
          ['StaleGarbageCollect', 'dropped_stale_garbage_collect'],
          ['Problematic', 'dropped_problematic'],
        ];
        const txs = (await Promise.all(reasons.map((_, i) => transfer(i)))).map((m) => m.tx);
        await chain.mempool(txs);
        const replacement = txs[txs.length - 1].txid;
        for (const [i, [reason]] of reasons.entries()) {
          await chain.drop([txs[i].txid], reason, reason === 'ReplaceByFee' ? replacement : null);
        }
        for (const [i, [reason, status]] of reasons.entries()) {
          const body = (await get(app, `/extended/v1/tx/${txs[i].txid}`)).json();
          assert.equal(body.tx_status, status, reason);
          assert.equal(body.replaced_by_tx_id, reason === 'ReplaceByFee' ? replacement : null);
          assert.equal('events' in body, false);
        }
        // tx/multiple shows the same statuses.
        const ids = txs.map((t) => t.txid).join(',');
        const multiple = (await get(app, `/extended/v1/tx/multiple?tx_id=${ids}`)).json();
        assert.deepEqual(
          txs.map((t) => multiple[t.txid].result.tx_status),
          reasons.map(([, status]) => status),
        );
      });
    });

    test('unconfirmed microblock txs: pending unless unanchored, then mined at tip+1 without a block', async () => {
      await withApi(engine, async ({ app, chain }) => {
        await chain.block();
        const mined = await transfer(0);
        const { tx } = mined;
        await chain.mempool([tx]);
        const microblock = await chain.microblock({ txs: [mined] });

        const anchored = await get(app, `/extended/v1/tx/${tx.txid}`);
        assert.equal(anchored.statusCode, 200);
        assert.equal(anchored.json().tx_status, 'pending');
        assert.equal('block_hash' in anchored.json(), false);

        const unanchored = (await get(app, `/extended/v1/tx/${tx.txid}?unanchored=true`)).json();
        assert.equal(unanchored.tx_status, 'success');
        assert.equal(unanchored.block_hash, '0x');
        assert.equal(unanchored.is_unanchored, true);
        assert.equal(unanchored.block_height, 2);
        assert.equal(unanchored.microblock_hash, microblock.hash);
        assert.equal(unanchored.microblock_sequence, 0);
        assert.equal(unanchored.events.length, 1);

        const multiple = (await get(app, `/extended/v1/tx/multiple?tx_id=${tx.txid}&unanchored=true`)).json();
        assert.equal(multiple[tx.txid].result.is_unanchored, true);
        const multipleAnchored = (await get(app, `/extended/v1/tx/multiple?tx_id=${tx.txid}`)).json();
        assert.equal(multipleAnchored[tx.txid].result.tx_status, 'pending');

        // The next block confirms the microblock: the tx is mined in that block, for every reader.
        const block = await chain.block({ confirms: [microblock] });
        for (const url of [`/extended/v1/tx/${tx.txid}`, `/extended/v1/tx/${tx.txid}?unanchored=true`]) {
          const confirmed = (await get(app, url)).json();
          assert.equal(confirmed.tx_status, 'success', url);
          assert.equal(confirmed.block_hash, block.block_hash, url);
          assert.equal(confirmed.block_height, 2, url);
          assert.equal(confirmed.is_unanchored, false, url);
          assert.equal(confirmed.microblock_hash, microblock.hash, url);
          assert.equal(confirmed.microblock_sequence, 0, url);
        }
      });
    });

    test('exclude_function_args drops contract_call.function_args', async () => {
      await withApi(engine, async ({ app, chain }) => {
        await chain.block();
        const call = await callTx({
          from: 'alice',
          fee: 300,
          nonce: 0,
          contract: `${SENDER}.counter`,
          fn: 'add',
          args: [Cl.uint(5), Cl.int(-2)],
        });
        await chain.mempool([call]);
        const full = (await get(app, `/extended/v1/tx/${call.txid}`)).json();
        assert.deepEqual(full.contract_call, {
          contract_id: `${SENDER}.counter`,
          function_name: 'add',
          function_signature: '',
          function_args: [
            { hex: '0x0100000000000000000000000000000005', repr: 'u5', name: '', type: 'uint' },
            { hex: '0x00fffffffffffffffffffffffffffffffe', repr: '-2', name: '', type: 'int' },
          ],
        });
        const lean = (await get(app, `/extended/v1/tx/${call.txid}?exclude_function_args=true`)).json();
        assert.deepEqual(lean.contract_call, {
          contract_id: `${SENDER}.counter`,
          function_name: 'add',
          function_signature: '',
        });
      });
    });

    test('malformed parameters are 400s that say what is wrong; unknown query keys are ignored', async () => {
      await withApi(engine, async ({ app, chain }) => {
        const mined = await transfer(0);
        const { tx } = mined;
        await chain.block({ txs: [mined] });
        const hex = tx.txid.slice(2);
        const notTxId = (got: string) =>
          `path parameter tx_id must be a transaction id (64 hex digits, 0x optional); got "${got}"`;
        const cases: [string, number, string][] = [
          ['/extended/v1/tx/0x1234', 400, notTxId('0x1234')],
          ['/extended/v1/tx/not-a-tx-id', 400, notTxId('not-a-tx-id')],
          [`/extended/v1/tx/0X${hex}`, 400, notTxId(`0X${hex}`)],
          [`/extended/v1/tx/0x${hex}0`, 400, notTxId(`0x${hex}0`)],
          [`/extended/v1/tx/0x${hex.slice(1)}`, 400, notTxId(`0x${hex.slice(1)}`)],
          [`/extended/v1/tx/0x${'zz'.repeat(32)}`, 400, notTxId(`0x${'zz'.repeat(32)}`)],
          // a long value is quoted cut, at 80 characters
          [`/extended/v1/tx/0x${'a'.repeat(900)}`, 400, notTxId(`0x${'a'.repeat(78)}…`)],
          [`/extended/v1/tx/0x${'a'.repeat(2000)}`, 414, 'a path parameter is longer than 1000 characters'],
          [
            `/extended/v1/tx/${tx.txid}?event_limit=101`,
            400,
            'query parameter event_limit must be 100 or less; got 101',
          ],
          [
            `/extended/v1/tx/${tx.txid}?event_limit=-1`,
            400,
            'query parameter event_limit must be 0 or more; got -1',
          ],
          [
            `/extended/v1/tx/${tx.txid}?event_limit=abc`,
            400,
            'query parameter event_limit must be a whole number; got "abc"',
          ],
          [
            `/extended/v1/tx/${tx.txid}?event_limit=1.5`,
            400,
            'query parameter event_limit must be a whole number; got "1.5"',
          ],
          [
            `/extended/v1/tx/${tx.txid}?event_limit=0x10`,
            400,
            'query parameter event_limit must be a whole number written in decimal digits; got "0x10"',
          ],
          [
            `/extended/v1/tx/${tx.txid}?event_offset=-1`,
            400,
            'query parameter event_offset must be 0 or more; got -1',
          ],
          [
            `/extended/v1/tx/${tx.txid}?event_offset=99999999999999999999`,
            400,
            'query parameter event_offset must be 2147483647 or less; got 100000000000000000000',
          ],
          [
            `/extended/v1/tx/${tx.txid}?unanchored=yes`,
            400,
            'query parameter unanchored must be true or false; got "yes"',
          ],
          [
            `/extended/v1/tx/${tx.txid}?unanchored=1`,
            400,
            'query parameter unanchored must be true or false; got "1"',
          ],
          [
            `/extended/v1/tx/${tx.txid}?exclude_function_args=maybe`,
            400,
            'query parameter exclude_function_args must be true or false; got "maybe"',
          ],
        ];
        for (const [url, status, message] of cases) {
          const res = await get(app, url);
          assert.equal(res.statusCode, status, url);
          assert.equal(res.json().statusCode, status, url);
          assert.equal(res.json().message, message, url);
        }
        const ignored = await get(app, `/extended/v1/tx/${tx.txid}?foo=bar&limit=9999`);
        assert.equal(ignored.statusCode, 200);
        assert.equal(ignored.json().tx_id, tx.txid);
        const largeOffset = await get(
          app,
          `/extended/v1/tx/${tx.txid}?event_offset=2147483647&event_limit=100`,
        );
        assert.equal(largeOffset.statusCode, 200);
        assert.deepEqual(largeOffset.json().events, []);
      });
    });
  });

  describe(`GET /extended/v1/tx/multiple (${engine})`, () => {
    test('mined, mempool and unknown ids; repeated and comma-separated forms agree', async () => {
      await withApi(engine, async ({ app, chain }) => {
        const minedTransfer = await transferWithLogs(0);
        await chain.block({ txs: [minedTransfer] });
        const mined = minedTransfer.tx;
        const { tx: pending } = await transfer(1);
        await chain.mempool([pending]);

        const repeated = await get(
          app,
          `/extended/v1/tx/multiple?tx_id=${UNKNOWN}&tx_id=${pending.txid}&tx_id=${mined.txid}&event_limit=1`,
        );
        assert.equal(repeated.statusCode, 200);
        assert.equal(repeated.headers.warning, undefined, 'not deprecated');
        const body = repeated.json();
        // Upstream's order: mined txs, then mempool txs, then the ids not found.
        assert.deepEqual(Object.keys(body), [mined.txid, pending.txid, UNKNOWN]);
        assert.equal(body[mined.txid].found, true);
        assert.equal(body[mined.txid].result.tx_status, 'success');
        assert.equal(body[mined.txid].result.event_count, 3);
        assert.equal(body[mined.txid].result.events.length, 1);
        assert.equal(body[pending.txid].found, true);
        assert.equal(body[pending.txid].result.tx_status, 'pending');
        assert.deepEqual(body[UNKNOWN], { found: false, result: { tx_id: UNKNOWN } });

        const comma = await get(
          app,
          `/extended/v1/tx/multiple?tx_id=${UNKNOWN},${pending.txid},${mined.txid}&event_limit=1`,
        );
        assert.deepEqual(comma.json(), body);
        const mixed = await get(
          app,
          `/extended/v1/tx/multiple?tx_id=${UNKNOWN},${pending.txid}&tx_id=${mined.txid}&event_limit=1`,
        );
        assert.deepEqual(mixed.json(), body);

        // Duplicates and upper-case spellings name one tx once.
        const upper = '0x' + mined.txid.slice(2).toUpperCase();
        const dup = (await get(app, `/extended/v1/tx/multiple?tx_id=${mined.txid}&tx_id=${upper}`)).json();
        assert.deepEqual(Object.keys(dup), [mined.txid]);
      });
    });

    test('404 when none of the ids is found; bad ids, too many ids and missing ids are 400s', async () => {
      await withApi(engine, async ({ app, chain }) => {
        const mined = await transfer(0);
        const { tx } = mined;
        await chain.block({ txs: [mined] });
        const none = await get(app, `/extended/v1/tx/multiple?tx_id=${UNKNOWN},0x${'cd'.repeat(32)}`);
        assert.equal(none.statusCode, 404);
        assert.deepEqual(none.json(), {
          statusCode: 404,
          error: 'Not Found',
          message: 'could not find any of the transactions by ID',
        });

        const hex = tx.txid.slice(2);
        const notTxId = (got: string) =>
          `query parameter tx_id must be a transaction id (0x and 64 hex digits); got "${got}"`;
        const missing =
          'query parameter tx_id is required: one or more transaction ids (0x and 64 hex digits each): repeat the key, or separate them by commas';
        const tooMany = Array.from({ length: MAX_MULTIPLE_TX_IDS + 1 }, () => `tx_id=${tx.txid}`).join('&');
        const cases: [string, string][] = [
          ['/extended/v1/tx/multiple', missing],
          ['/extended/v1/tx/multiple?event_limit=1', missing],
          ['/extended/v1/tx/multiple?tx_id=bad', notTxId('bad')],
          ['/extended/v1/tx/multiple?tx_id=', notTxId('')],
          [`/extended/v1/tx/multiple?tx_id=${tx.txid},`, notTxId('')],
          [`/extended/v1/tx/multiple?tx_id=0X${hex}`, notTxId(`0X${hex}`)],
          [`/extended/v1/tx/multiple?tx_id=${tx.txid}&tx_id=0x${hex.slice(1)}`, notTxId(`0x${hex.slice(1)}`)],
          [
            `/extended/v1/tx/multiple?tx_id=${hex}`,
            `query parameter tx_id must start with "0x"; got "${hex}"`,
          ],
          [
            `/extended/v1/tx/multiple?${tooMany}`,
            `query parameter tx_id must be given at most ${MAX_MULTIPLE_TX_IDS} values; got ${MAX_MULTIPLE_TX_IDS + 1}`,
          ],
          [
            `/extended/v1/tx/multiple?tx_id=${tx.txid}&event_limit=101`,
            'query parameter event_limit must be 100 or less; got 101',
          ],
          [
            `/extended/v1/tx/multiple?tx_id=${tx.txid}&event_offset=-1`,
            'query parameter event_offset must be 0 or more; got -1',
          ],
          [
            `/extended/v1/tx/multiple?tx_id=${tx.txid}&unanchored=yes`,
            'query parameter unanchored must be true or false; got "yes"',
          ],
        ];
        for (const [url, message] of cases) {
          const res = await get(app, url);
          assert.equal(res.statusCode, 400, url.slice(0, 120));
          assert.equal(res.json().message, message, url.slice(0, 120));
        }
        const exactlyMax = Array.from({ length: MAX_MULTIPLE_TX_IDS }, () => `tx_id=${tx.txid}`).join('&');
        assert.equal((await get(app, `/extended/v1/tx/multiple?${exactlyMax}`)).statusCode, 200);
        const ignored = await get(app, `/extended/v1/tx/multiple?tx_id=${tx.txid}&whatever=1`);
        assert.equal(ignored.statusCode, 200);
      });
    });
  });
}
