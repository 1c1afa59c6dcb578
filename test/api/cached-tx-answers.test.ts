import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { buildApiServer } from '../../src/api/server.js';
import { API_VERSION, startTestApi, type TestApi } from '../support/api.js';
import { addressOf, deployTx, ev, transferTx, transferWithEvent, type MinedTx } from '../support/chain.js';
import { silentLogger, stopOwnCluster } from '../support/database.js';

// Tx answers cached while the chain state they were made under stays (src/api/answers/tx.ts, each with the
// tag of the rows it was read from; src/api/cache/answer-cache.ts). Each test runs a second server over the same database whose cached answers are never
// used (every URL it is asked is asked once after each change, through `fresh`), and compares: a cached answer
// must be byte for byte what a fresh read gives, and after a change of the chain state never the old one.
// "From memory" is shown by changing a row behind the API's back (no new chain state): a cached answer still
// shows the row as it was, while anything that reads the row (even just its key) sees the change.

after(stopOwnCluster);

const ALICE = addressOf('alice');
const BOB = addressOf('bob');
const UNKNOWN = `0x${'cd'.repeat(32)}`;

interface Servers {
  api: TestApi;
  /** a server over the same database, whose answers are each read fresh (see `freshGet`) */
  other: FastifyInstance;
}

async function withServers(fn: (s: Servers) => Promise<void>): Promise<void> {
  const api = await startTestApi({ engine: 'postgres' });
  const other = await buildApiServer({ apiVersion: API_VERSION, store: api.store, logger: silentLogger });
  try {
    await fn({ api, other });
  } finally {
    await other.close();
    await api.close();
  }
}

const get = (app: FastifyInstance, url: string, headers: Record<string, string> = {}) =>
  app.inject({ method: 'GET', url, headers });

let cacheBuster = 0;
/**
 * A fresh answer of `url` from the other server: a query key of no meaning (Fastify's schema drops it: the
 * handler never sees it) makes the URL one that server has never cached, so its answer is read now.
 */
async function freshGet(other: FastifyInstance, url: string) {
  cacheBuster += 1;
  return get(other, `${url}${url.includes('?') ? '&' : '?'}fresh=${cacheBuster}`);
}

/**
 * Asks three times (tx answers are cached on their second ask: the third is from memory) and checks each against
 * a fresh read; returns the answer.
 */
async function assertKeptIsFresh(s: Servers, url: string, status = 200) {
  const first = await get(s.api.app, url);
  const second = await get(s.api.app, url);
  const cached = await get(s.api.app, url);
  const fresh = await freshGet(s.other, url);
  assert.equal(first.statusCode, status, `${url}: ${first.body}`);
  for (const res of [second, cached, fresh]) {
    assert.equal(res.statusCode, status, url);
    assert.equal(res.body, first.body, url);
    assert.equal(res.headers.etag, first.headers.etag, url);
    assert.equal(res.headers['content-type'], 'application/json; charset=utf-8', url);
  }
  if (status === 200) assert.equal(cached.headers['cache-control'], 'public, no-cache, must-revalidate');
  return first;
}

/** Makes a tx's mined rows invisible (or visible again) without a new chain state: a change behind the API's back. */
async function setMinedRowsVisible(api: TestApi, txId: string, visible: boolean) {
  await api.store.sql`UPDATE txs SET canonical = ${visible} WHERE tx_id = ${txId}`;
}

const transfer = (nonce: number, fee = 10, amount = 100) =>
  transferWithEvent({ from: 'alice', to: BOB, amount, fee, nonce });

/** A transfer with three events, for event paging. */
async function transferWithThreeEvents(nonce: number): Promise<MinedTx> {
  const mined = await transfer(nonce);
  mined.events!.push(ev.stxTransfer(ALICE, BOB, 1), ev.stxTransfer(ALICE, BOB, 2));
  return mined;
}

describe('tx answers cached while the chain state stays (postgres)', () => {
  test('tx by id: byte for byte the fresh answer, each query its own, from memory, 304 on its own tag', async () => {
    await withServers(async (s) => {
      const { api } = s;
      const mined = await transferWithThreeEvents(0);
      const block = await api.chain.block({ txs: [mined] });
      const id = mined.tx.txid;
      const url = `/extended/v1/tx/${id}`;
      const answer = await assertKeptIsFresh(s, url);
      assert.equal(answer.json().block_hash, block.block_hash);
      assert.equal(answer.json().events.length, 3);
      // query variants are other answers, each cached under its own URL
      const variants = new Map([
        [`${url}?event_limit=1`, 1],
        [`${url}?event_offset=2`, 1],
        [`${url}?event_limit=2&event_offset=1`, 2],
        [`${url}?unanchored=true`, 3],
        [`/extended/v1/tx/${id.toUpperCase().replace('0X', '0x')}`, 3],
      ]);
      for (const [variant, events] of variants) {
        const res = await assertKeptIsFresh(s, variant);
        assert.equal(res.json().events.length, events, variant);
        assert.equal(res.json().tx_id, id, variant);
      }
      assert.equal((await get(api.app, `${url}?event_offset=2`)).json().events[0].event_index, 2);

      // From memory: with the row made invisible behind the API's back (no new chain state), the cached
      // answers still show it, the fresh read finds nothing.
      await setMinedRowsVisible(api, id, false);
      const cached = await get(api.app, url);
      assert.equal(cached.statusCode, 200);
      assert.equal(cached.body, answer.body);
      assert.equal((await freshGet(s.other, url)).statusCode, 404);
      // 304 against the entry's own tag, without reading anything
      const tag = String(answer.headers.etag);
      assert.match(tag, /^"[0-9a-f]{64}"$/);
      for (const ifNoneMatch of [tag, `W/${tag}`, `"other", ${tag}`]) {
        const notModified = await get(api.app, url, { 'if-none-match': ifNoneMatch });
        assert.equal(notModified.statusCode, 304, ifNoneMatch);
        assert.equal(notModified.body, '');
        assert.equal(notModified.headers['cache-control'], 'public, no-cache, must-revalidate');
      }
      assert.equal((await get(api.app, url, { 'if-none-match': '"other"' })).body, answer.body);
      await setMinedRowsVisible(api, id, true);

      // an id not found is a 404, and is never cached as found: it shows once it reaches the mempool
      const late = await transferTx({ from: 'alice', fee: 10, nonce: 1, to: BOB, amount: 5 });
      const lateUrl = `/extended/v1/tx/${late.txid}`;
      assert.equal((await get(api.app, lateUrl)).statusCode, 404);
      assert.equal((await get(api.app, lateUrl)).statusCode, 404);
      await api.chain.mempool([late]);
      assert.equal((await assertKeptIsFresh(s, lateUrl)).json().tx_status, 'pending');
    });
  });

  test('a new block, a reorg orphaning the tx, the tx mined again on the other fork: never the old answer', async () => {
    await withServers(async (s) => {
      const { api } = s;
      const mined = await transfer(0);
      const id = mined.tx.txid;
      const url = `/extended/v1/tx/${id}`;
      const urls = [url, `${url}?event_limit=1`, `${url}?unanchored=true`];
      const g = await api.chain.block();
      const a2 = await api.chain.block({ parent: g, txs: [mined] });
      for (const u of urls) assert.equal((await assertKeptIsFresh(s, u)).json().block_hash, a2.block_hash);

      // A new block drops what was cached: a row made invisible behind the API's back now shows as gone.
      await setMinedRowsVisible(api, id, false);
      assert.equal((await get(api.app, url)).statusCode, 200, 'cached while the tip stays');
      const a3 = await api.chain.block({ parent: a2 });
      assert.equal((await get(api.app, url)).statusCode, 404, 'not cached past the new block');
      await setMinedRowsVisible(api, id, true);
      for (const u of urls) assert.equal((await assertKeptIsFresh(s, u)).json().block_height, 2);

      // A fork from g wins at height 4: the tx is orphaned and back in the mempool.
      const b2 = await api.chain.block({ parent: g });
      const b3 = await api.chain.block({ parent: b2 });
      assert.equal((await assertKeptIsFresh(s, url)).json().block_hash, a2.block_hash, 'not canonical yet');
      const b4 = await api.chain.block({ parent: b3 });
      assert.equal(b4.height, a3.height + 1);
      for (const u of urls) {
        const orphaned = await assertKeptIsFresh(s, u);
        assert.equal(orphaned.json().tx_status, 'pending', u);
        assert.equal(orphaned.json().block_hash, undefined, u);
      }
      // mined again on the new fork
      const b5 = await api.chain.block({ parent: b4, txs: [mined] });
      for (const u of urls) {
        const again = await assertKeptIsFresh(s, u);
        assert.equal(again.json().tx_status, 'success', u);
        assert.equal(again.json().block_hash, b5.block_hash, u);
        assert.equal(again.json().canonical, true, u);
      }
    });
  });

  test('a mempool tx mined, dropped or replaced is never answered as it was; a mined tx outlives mempool changes', async () => {
    await withServers(async (s) => {
      const { api } = s;
      const settled = await transfer(0);
      await api.chain.block({ txs: [settled] });
      const settledUrl = `/extended/v1/tx/${settled.tx.txid}`;
      const settledAnswer = await assertKeptIsFresh(s, settledUrl);

      const toMine = await transferTx({ from: 'alice', fee: 10, nonce: 1, to: BOB, amount: 1 });
      const toDrop = await transferTx({ from: 'carol', fee: 10, nonce: 0, to: BOB, amount: 2 });
      const outbid = await transferTx({ from: 'dave', fee: 10, nonce: 0, to: BOB, amount: 3 });
      await api.chain.mempool([toMine, toDrop, outbid]);
      const url = (tx: { txid: string }) => `/extended/v1/tx/${tx.txid}`;
      for (const tx of [toMine, toDrop, outbid]) {
        assert.equal((await assertKeptIsFresh(s, url(tx))).json().tx_status, 'pending');
      }
      // The mined tx's cached answer outlived that mempool change: its row, made invisible behind the API's
      // back, still shows; so does its entry after another mempool change (the drop below).
      await setMinedRowsVisible(api, settled.tx.txid, false);
      assert.equal((await get(api.app, settledUrl)).body, settledAnswer.body);

      // dropped by the node
      const pendingTag = String((await get(api.app, url(toDrop))).headers.etag);
      await api.chain.drop([toDrop.txid], 'TooExpensive');
      assert.equal((await get(api.app, settledUrl)).body, settledAnswer.body, 'mined: cached past the drop');
      await setMinedRowsVisible(api, settled.tx.txid, true);
      const dropped = await assertKeptIsFresh(s, url(toDrop));
      assert.equal(dropped.json().tx_status, 'dropped_too_expensive');
      assert.notEqual(dropped.headers.etag, pendingTag);
      assert.equal((await get(api.app, url(toDrop), { 'if-none-match': pendingTag })).statusCode, 200);

      // replaced by fee: a tx of the same payer and nonce with a higher fee
      const better = await transferTx({ from: 'dave', fee: 50, nonce: 0, to: BOB, amount: 3 });
      await api.chain.mempool([better]);
      const replaced = await assertKeptIsFresh(s, url(outbid));
      assert.equal(replaced.json().tx_status, 'dropped_replace_by_fee');
      assert.equal(replaced.json().replaced_by_tx_id, better.txid);

      // mined
      const block = await api.chain.block({
        txs: [{ tx: toMine, events: [ev.stxTransfer(ALICE, BOB, 1)] }],
      });
      const nowMined = await assertKeptIsFresh(s, url(toMine));
      assert.equal(nowMined.json().tx_status, 'success');
      assert.equal(nowMined.json().block_hash, block.block_hash);
      assert.equal((await assertKeptIsFresh(s, url(better))).json().tx_status, 'pending');
    });
  });

  test('microblocks: an unanchored answer follows the stream (a fork of it too), an anchored one the confirming block', async () => {
    await withServers(async (s) => {
      const { api } = s;
      const parent = await api.chain.block({ txs: [await transfer(0)] });
      const streamed = await transfer(1);
      const other = await transferWithEvent({ from: 'carol', to: BOB, amount: 9, fee: 10, nonce: 0 });
      await api.chain.mempool([streamed.tx, other.tx]);
      const anchored = `/extended/v1/tx/${streamed.tx.txid}`;
      const unanchored = `${anchored}?unanchored=true`;
      assert.equal((await assertKeptIsFresh(s, anchored)).json().tx_status, 'pending');
      assert.equal((await assertKeptIsFresh(s, unanchored)).json().tx_status, 'pending');
      const m1 = await api.chain.microblock({ parent, txs: [streamed] });
      const inStream = await assertKeptIsFresh(s, unanchored);
      assert.equal(inStream.json().tx_status, 'success');
      assert.equal(inStream.json().microblock_hash, m1.hash);
      assert.equal(inStream.json().is_unanchored, true);
      assert.equal((await assertKeptIsFresh(s, anchored)).json().tx_status, 'pending');
      // A fork of the stream replaces m1 (same sequence): its tx is back in the mempool. The cached answer
      // above read no mempool row: only the microblock part of the chain state tells it is gone.
      const m1b = await api.chain.microblock({ parent, txs: [other] });
      assert.equal((await assertKeptIsFresh(s, unanchored)).json().tx_status, 'pending');
      assert.equal((await assertKeptIsFresh(s, anchored)).json().tx_status, 'pending');
      const m2 = await api.chain.microblock({ parent, previous: m1b, txs: [streamed] });
      assert.equal((await assertKeptIsFresh(s, unanchored)).json().microblock_hash, m2.hash);
      const confirming = await api.chain.block({ parent, confirms: [m1b, m2] });
      for (const u of [anchored, unanchored]) {
        const confirmed = await assertKeptIsFresh(s, u);
        assert.equal(confirmed.json().block_hash, confirming.block_hash, u);
        assert.equal(confirmed.json().microblock_hash, m2.hash, u);
        assert.equal(confirmed.json().is_unanchored, false, u);
      }
    });
  });

  test('tx/multiple: cached while the state stays; an id not found shows once it arrives; a new block drops all', async () => {
    await withServers(async (s) => {
      const { api } = s;
      const mined = await transfer(0);
      await api.chain.block({ txs: [mined] });
      const minedOnly = `/extended/v1/tx/multiple?tx_id=${mined.tx.txid}`;
      const late = await transferTx({ from: 'alice', fee: 10, nonce: 1, to: BOB, amount: 5 });
      const withMissing = `/extended/v1/tx/multiple?tx_id=${mined.tx.txid},${late.txid}`;
      const minedAnswer = await assertKeptIsFresh(s, minedOnly);
      assert.equal(minedAnswer.json()[mined.tx.txid].found, true);
      const missing = await assertKeptIsFresh(s, withMissing);
      assert.equal(missing.json()[late.txid].found, false);
      assert.equal((await get(api.app, `/extended/v1/tx/multiple?tx_id=${UNKNOWN}`)).statusCode, 404);

      // from memory, and 304 on the entry's tag
      await setMinedRowsVisible(api, mined.tx.txid, false);
      assert.equal((await get(api.app, minedOnly)).body, minedAnswer.body);
      const notModified = await get(api.app, minedOnly, {
        'if-none-match': String(minedAnswer.headers.etag),
      });
      assert.equal(notModified.statusCode, 304);
      // a mempool change caches the mined-only answer, not the one with an id found nowhere
      await api.chain.mempool([late]);
      assert.equal((await get(api.app, minedOnly)).body, minedAnswer.body);
      await setMinedRowsVisible(api, mined.tx.txid, true);
      const arrived = await assertKeptIsFresh(s, withMissing);
      assert.equal(arrived.json()[late.txid].found, true);
      assert.equal(arrived.json()[late.txid].result.tx_status, 'pending');

      // a new block: the mined-only answer is read again
      await setMinedRowsVisible(api, mined.tx.txid, false);
      await api.chain.block();
      assert.equal((await get(api.app, minedOnly)).statusCode, 404);
      await setMinedRowsVisible(api, mined.tx.txid, true);
      await assertKeptIsFresh(s, minedOnly);
    });
  });
});

// The routes beyond the ten cache their answers the same way (answers/address-history.ts, block-lists.ts,
// tx-lists.ts, account-state.ts, tokens.ts, contract-info.ts): under the tip and its microblock, and those that
// show the mempool also under its version. Each change of the chain state below is followed by every URL: an
// answer of the state it shows is replaced (the fresh answer, a new tag), the others stay cached (shown by a row
// changed behind the API's back).

/** The answers of `urls` now, by URL (each asked three times: cached from its first or its second ask). */
async function keptAnswers(s: Servers, urls: string[]) {
  const answers = new Map<string, { body: string; etag: string }>();
  for (const url of urls) {
    const res = await assertKeptIsFresh(s, url);
    answers.set(url, { body: res.body, etag: String(res.headers.etag) });
  }
  return answers;
}

/** Every URL of `before` is answered from memory: the body and tag it had, whatever the database says now. */
async function assertServedFromMemory(s: Servers, before: Map<string, { body: string; etag: string }>) {
  for (const [url, answer] of before) {
    const res = await get(s.api.app, url);
    assert.equal(res.body, answer.body, `${url}: cached`);
    assert.equal(res.headers.etag, answer.etag, url);
  }
}

/** Every URL of `before` is answered fresh, under a new tag; returns the new answers' JSON by URL. */
async function assertReplaced(s: Servers, before: Map<string, { body: string; etag: string }>) {
  const after = await keptAnswers(s, [...before.keys()]);
  for (const [url, answer] of before) assert.notEqual(after.get(url)!.etag, answer.etag, `${url}: a new tag`);
  return new Map([...after].map(([url, a]) => [url, JSON.parse(a.body) as Record<string, unknown>]));
}

/** Hides (or shows again) a tx's pending row behind the API's back: no new mempool version. */
async function setPendingRowHidden(api: TestApi, txId: string, hidden: boolean) {
  await api.store.sql`UPDATE mempool_txs SET pruned = ${hidden} WHERE tx_id = ${txId}`;
}

describe('answers beyond the ten cached while the chain state stays (postgres)', () => {
  test('lists and account state: kept, then replaced by a mempool tx, a drop, a microblock and a block as they show them', async () => {
    await withServers(async (s) => {
      const { api } = s;
      const mined = await transfer(0);
      const first = await api.chain.block({ txs: [mined] });
      const minedId = mined.tx.txid;
      const pending = await transferTx({ from: 'alice', fee: 10, nonce: 1, to: BOB, amount: 7 });
      const carols = await transferTx({ from: 'carol', fee: 10, nonce: 0, to: BOB, amount: 8 });
      await api.chain.mempool([pending, carols]);

      const showingMempool = [
        '/extended/v1/tx/mempool',
        `/extended/v1/address/${ALICE}/mempool`,
        `/extended/v1/address/${ALICE}/nonces`,
        `/extended/v1/address/${ALICE}/stx`,
        `/extended/v2/addresses/${ALICE}/balances/stx?include_mempool=true`,
      ];
      const [mempoolList, aliceMempool, nonces, v1Stx, v2StxPending] = showingMempool;
      const chainOnly = [
        '/extended/v1/tx?limit=50',
        '/extended/v1/tx?limit=50&unanchored=true',
        '/extended/v2/blocks',
        `/extended/v2/blocks/${first.height}/transactions`,
        '/extended/v2/burn-blocks',
        `/extended/v2/burn-blocks/${first.burn_block_height}`,
        `/extended/v2/burn-blocks/${first.burn_block_height}/blocks`,
        `/extended/v2/addresses/${ALICE}/transactions`,
        `/extended/v2/addresses/${ALICE}/transactions/${minedId}/events`,
        `/extended/v2/addresses/${ALICE}/balances/stx`,
        `/extended/v2/addresses/${ALICE}/balances/ft`,
        `/extended/v1/tokens/nft/holdings?principal=${BOB}`,
      ];
      const [recent, recentUnanchored, blocks, blockTxs, , , , addressTxs] = chainOnly;
      const mempoolAnswers = await keptAnswers(s, showingMempool);
      const chainAnswers = await keptAnswers(s, chainOnly);
      const json = (url: string) =>
        JSON.parse((mempoolAnswers.get(url) ?? chainAnswers.get(url))!.body) as Record<string, unknown>;
      assert.equal(json(mempoolList).total, 2);
      assert.equal(json(aliceMempool).total, 1);
      assert.equal(json(nonces).last_mempool_tx_nonce, 1);
      assert.equal(json(nonces).possible_next_nonce, 2);
      assert.equal(json(v1Stx).pending_balance_outbound, String(7 + 10));
      assert.equal(json(recent).total, 1);
      assert.equal(json(blocks).total, 1);
      assert.equal(json(addressTxs).total, 1);

      // From memory: rows changed behind the API's back (no new chain state) still show as they were.
      await setPendingRowHidden(api, pending.txid, true);
      await setMinedRowsVisible(api, minedId, false);
      await assertServedFromMemory(s, mempoolAnswers);
      await assertServedFromMemory(s, chainAnswers);
      assert.equal((await freshGet(s.other, mempoolList)).json().total, 1);
      assert.equal((await freshGet(s.other, blockTxs)).statusCode, 404, 'its only tx hidden');
      await setPendingRowHidden(api, pending.txid, false);

      // A mempool tx arrives: the answers showing the mempool are read again, the others stay cached.
      const next = await transferTx({ from: 'alice', fee: 10, nonce: 2, to: BOB, amount: 9 });
      await api.chain.mempool([next]);
      await assertServedFromMemory(s, chainAnswers);
      let now = await assertReplaced(s, mempoolAnswers);
      assert.equal(now.get(mempoolList)!.total, 3);
      assert.equal(now.get(aliceMempool)!.total, 2);
      assert.equal(now.get(nonces)!.last_mempool_tx_nonce, 2);
      assert.equal(now.get(v2StxPending)!.pending_balance_outbound, String(7 + 10 + 9 + 10));

      // Dropped by the node: the same.
      const afterArrival = await keptAnswers(s, showingMempool);
      await api.chain.drop([carols.txid], 'TooExpensive');
      await assertServedFromMemory(s, chainAnswers);
      await setMinedRowsVisible(api, minedId, true);
      now = await assertReplaced(s, afterArrival);
      assert.equal(now.get(mempoolList)!.total, 2);
      assert.equal(
        now.get(aliceMempool)!.total,
        2,
        'carol’s tx: alice’s list the same, under the new version',
      );

      // A microblock streams alice's pending tx: every answer is read again.
      const afterDrop = await keptAnswers(s, showingMempool);
      const streamed = { tx: pending, events: [ev.stxTransfer(ALICE, BOB, 7)] };
      const micro = await api.chain.microblock({ parent: first, txs: [streamed] });
      now = await assertReplaced(s, new Map([...afterDrop, ...chainAnswers]));
      assert.equal(now.get(recentUnanchored)!.total, 2);
      assert.equal(now.get(recent)!.total, 1);
      assert.equal(now.get(addressTxs)!.total, 2, 'the v2 address list shows the unconfirmed stream');
      assert.equal(now.get(nonces)!.last_executed_tx_nonce, 1);

      // A block confirming it: every answer is read again.
      const beforeBlock = await keptAnswers(s, [...showingMempool, ...chainOnly]);
      await api.chain.block({ parent: first, confirms: [micro], txs: [{ tx: next }] });
      now = await assertReplaced(s, beforeBlock);
      assert.equal(now.get(blocks)!.total, 2);
      assert.equal(now.get(recent)!.total, 3);
      assert.equal(now.get(mempoolList)!.total, 0);
      assert.equal(now.get(nonces)!.last_executed_tx_nonce, 2);
      assert.equal(now.get(nonces)!.last_mempool_tx_nonce, null);
    });
  });

  test('a sibling block that settles a same-nonce pair moves the mempool version; a contract off the chain is never cached', async () => {
    await withServers(async (s) => {
      const { api } = s;
      const g = await api.chain.block();
      // A pair (alice, 0): the mined tx wins, the better-paying pending one is dropped as replaced.
      const minedFirst = await transferTx({ from: 'alice', fee: 10, nonce: 0, to: BOB, amount: 1 });
      const outbid = await transferTx({ from: 'alice', fee: 50, nonce: 0, to: BOB, amount: 2 });
      await api.chain.mempool([outbid]);
      await api.chain.block({ parent: g, txs: [{ tx: minedFirst }] });
      // A fork from g wins: the mined tx is back in the mempool as pending; its pair is left as it was.
      const b2 = await api.chain.block({ parent: g });
      await api.chain.block({ parent: b2 });
      const urls = ['/extended/v1/tx/mempool', `/extended/v1/address/${ALICE}/nonces`];
      const before = await keptAnswers(s, urls);
      const pendingIds = (JSON.parse(before.get(urls[0])!.body) as { results: { tx_id: string }[] }).results;
      assert.deepEqual(
        pendingIds.map((t) => t.tx_id),
        [minedFirst.txid],
      );
      const version = async () =>
        (await api.store.sql<{ v: number }[]>`SELECT mempool_version AS v FROM chain_tip`)[0].v;
      const versionBefore = await version();
      // A sibling of the tip mines the restored tx: stored off the canonical chain, it settles the pair by fee,
      // so the restored tx is dropped as replaced by the better-paying one, without a new tip.
      await api.chain.block({ parent: b2, txs: [{ tx: minedFirst }] });
      assert.equal(await version(), versionBefore + 1, 'the mempool changed: its version moves');
      const now = await assertReplaced(s, before);
      assert.equal(now.get(urls[0])!.total, 0);
      assert.equal(now.get(urls[1])!.last_mempool_tx_nonce, null);
      const dropped = await assertKeptIsFresh(s, `/extended/v1/tx/${minedFirst.txid}`);
      assert.equal(dropped.json().tx_status, 'dropped_replace_by_fee');
      assert.equal(dropped.json().replaced_by_tx_id, outbid.txid);

      // A sibling that settles nothing leaves the version as it was.
      await api.chain.block({ parent: b2 });
      assert.equal(await version(), versionBefore + 1);

      // v1 contract: a canonical deployment with its ABI is cached; one without (or off the chain) is read each time.
      const deploy = await deployTx({
        from: 'carol',
        fee: 10,
        nonce: 0,
        name: 'kept',
        code: '(define-data-var n int 1)',
      });
      await api.chain.block({ txs: [{ tx: deploy }] });
      const contractId = `${addressOf('carol')}.kept`;
      const contractUrl = `/extended/v1/contract/${contractId}`;
      const withoutAbi = await assertKeptIsFresh(s, contractUrl);
      assert.equal(withoutAbi.json().abi, null);
      await api.store
        .sql`UPDATE smart_contracts SET abi = '{"functions":[]}' WHERE contract_id = ${contractId}`;
      const withAbi = await assertKeptIsFresh(s, contractUrl);
      assert.equal(withAbi.json().abi, '{"functions":[]}');
      assert.equal(withAbi.json().canonical, true);
      await api.store.sql`UPDATE smart_contracts SET abi = NULL WHERE contract_id = ${contractId}`;
      assert.equal((await get(api.app, contractUrl)).body, withAbi.body, 'canonical with its ABI: cached');
      assert.equal((await freshGet(s.other, contractUrl)).json().abi, null);
    });
  });
});
