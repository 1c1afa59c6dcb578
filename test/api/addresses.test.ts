import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { Cl } from '@stacks/transactions';
import { c32ToB58 } from 'c32check';
import { Ingestor } from '../../src/ingest/ingestor.js';
import { replayFile } from '../../src/ingest/replay.js';
import { loadVestingFile, parseVestingFile, VestingFileError } from '../../src/ingest/vesting.js';
import type { Engine } from '../../src/store/db.js';
import { listAccountTxs } from '../../src/store/read/account-txs.js';
import { getAccountBalances } from '../../src/store/read/balances.js';
import { startTestApi } from '../support/api.js';
import { addressOf, callTx, deployTx, ev, transferTx, type MinedTx } from '../support/chain.js';
import { openTestStore, silentLogger, stopOwnCluster } from '../support/database.js';
import { testEngines } from '../support/engines.js';
import { fixtureFile } from '../support/shared.js';

after(stopOwnCluster);

const ALICE = addressOf('alice');
const BOB = addressOf('bob');
const CAROL = addressOf('carol');
const DAVE = addressOf('dave');
const SPONSOR = addressOf('sponsor');
const MINER = addressOf('miner');
const CONTRACT = `${CAROL}.hello-world`;
const BUX = `${CONTRACT}::bux`;
const TENDIES = `${CONTRACT}::tendies`;
const POX4 = 'ST000000000000000000002AMW42H.pox-4';
const POX2 = 'ST000000000000000000002AMW42H.pox-2';

interface Answer {
  status: number;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  body: any;
  headers: Record<string, unknown>;
}

async function setup(engine: Engine) {
  const { store, chain, app, close } = await startTestApi({ engine });
  const get = async (url: string): Promise<Answer> => {
    const res = await app.inject({ method: 'GET', url });
    return { status: res.statusCode, body: res.body ? res.json() : null, headers: res.headers };
  };
  return { store, chain, get, close };
}

const unlocked = {
  lock_tx_id: '',
  locked: '0',
  lock_height: 0,
  burnchain_lock_height: 0,
  burnchain_unlock_height: 0,
};

/** A call by carol to her contract that did what `events` say (mints, payouts...). */
async function carolCall(nonce: number, events: MinedTx['events'], fn = 'run'): Promise<MinedTx> {
  return { tx: await callTx({ from: 'carol', fee: 10, nonce, contract: CONTRACT, fn }), events };
}

for (const engine of testEngines(import.meta.url)) {
  describe(`address endpoints (${engine})`, () => {
    test('balances: STX with fees of failed and sponsored txs, FT/NFT with negative balances, contract principal, mempool, vesting, miner rewards', async () => {
      const { store, chain, get, close } = await setup(engine);
      const dir = mkdtempSync(join(tmpdir(), 'vesting-'));
      try {
        const deploy = await deployTx({
          from: 'carol',
          fee: 10,
          nonce: 0,
          name: 'hello-world',
          code: '(+ 1 1)',
        });
        const faucet = await carolCall(1, [
          ev.stxMint(ALICE, 100_000),
          ev.stxMint(SPONSOR, 5_000),
          ev.ftMint(BUX, ALICE, 100_000),
          ...Array.from({ length: 300 }, (_, i) => ev.nftMint(BUX, ALICE, Cl.uint(i + 1))),
        ]);
        const a0 = await transferTx({ from: 'alice', fee: 1234, nonce: 0, to: BOB, amount: 4900 });
        const a1 = await transferTx({ from: 'alice', fee: 1234, nonce: 1, to: CONTRACT, amount: 1100 });
        const a2 = await callTx({ from: 'alice', fee: 1234, nonce: 2, contract: CONTRACT, fn: 'pay' });
        const a3 = await callTx({ from: 'alice', fee: 1234, nonce: 3, contract: CONTRACT, fn: 'fail' });
        const payout = await carolCall(2, [ev.stxTransfer(CONTRACT, DAVE, 15)], 'payout');
        const sponsored = await transferTx({
          from: 'bob',
          fee: 1234,
          nonce: 0,
          to: DAVE,
          amount: 100,
          sponsor: { key: 'sponsor', nonce: 0 },
        });
        await chain.block({
          txs: [
            { tx: deploy },
            faucet,
            { tx: a0, events: [ev.stxTransfer(ALICE, BOB, 4900)] },
            { tx: a1, events: [ev.stxTransfer(ALICE, CONTRACT, 1100)] },
            {
              tx: a2,
              events: [
                ev.stxTransfer(ALICE, CONTRACT, 250),
                ev.stxTransfer(ALICE, DAVE, 135),
                ev.ftTransfer(BUX, ALICE, BOB, 385),
                ev.ftTransfer(TENDIES, ALICE, BOB, 1_000_000),
                ...Array.from({ length: 38 }, (_, i) => ev.nftTransfer(BUX, ALICE, BOB, Cl.uint(i + 1))),
                ...Array.from({ length: 100 }, (_, i) => ev.nftTransfer(TENDIES, ALICE, BOB, Cl.uint(i))),
              ],
            },
            // failed: the fee is paid, its events never happened
            { tx: a3, status: 'abort_by_response', events: [ev.stxTransfer(ALICE, BOB, 99_999)] },
            payout,
            { tx: sponsored, events: [ev.stxTransfer(BOB, DAVE, 100)] },
          ],
        });
        await chain.block({
          txs: [await carolCall(3, [ev.stxTransfer(CONTRACT, DAVE, 1)])],
          minerRewards: [{ recipient: MINER, coinbase: 1000 }],
        });
        // pending: alice pays 500 + 300 fee to bob; the sponsor pays the fee of a tx by dave
        await chain.mempool([
          await transferTx({ from: 'alice', fee: 300, nonce: 4, to: BOB, amount: 500 }),
          // origin nonce 1: a sponsored tx claims its sponsor's address with its origin's nonce (the
          // original API's rule, store/write/mempool.ts), and the mined sponsored tx above holds (sponsor, 0)
          await transferTx({
            from: 'dave',
            fee: 50,
            nonce: 1,
            to: BOB,
            amount: 10,
            sponsor: { key: 'sponsor', nonce: 1 },
          }),
        ]);
        const vesting = join(dir, 'vesting.csv');
        writeFileSync(
          vesting,
          `address,value,blocks\n${c32ToB58(ALICE)},4139394444,1\n${ALICE},1000,50\n${DAVE},7,2\n`,
        );
        assert.equal(await loadVestingFile(store, vesting, silentLogger), 3);
        assert.equal(await loadVestingFile(store, vesting, silentLogger), null, 'unchanged: not reloaded');

        const alice = await get(`/extended/v1/address/${ALICE}/balances`);
        assert.equal(alice.status, 200);
        assert.deepEqual(alice.body, {
          stx: {
            balance: '88679',
            estimated_balance: '87879',
            pending_balance_inbound: '0',
            pending_balance_outbound: '800',
            total_sent: '6385',
            total_received: '100000',
            total_fees_sent: '4936',
            total_miner_rewards_received: '0',
            ...unlocked,
          },
          fungible_tokens: {
            [BUX]: { balance: '99615', total_sent: '385', total_received: '100000' },
            [TENDIES]: { balance: '-1000000', total_sent: '1000000', total_received: '0' },
          },
          non_fungible_tokens: {
            [BUX]: { count: '262', total_sent: '38', total_received: '300' },
            [TENDIES]: { count: '-100', total_sent: '100', total_received: '0' },
          },
          token_offering_locked: {
            total_locked: '1000',
            total_unlocked: '4139394444',
            unlock_schedule: [
              { amount: '4139394444', block_height: 1 },
              { amount: '1000', block_height: 50 },
            ],
          },
        });
        assert.equal(alice.headers.warning, undefined, 'not deprecated (contract §9)');
        assert.match(String(alice.headers.etag), /^"0x/);

        // the same as of block 1 (a sum over the event rows): no mempool part
        const aliceAt1 = await get(`/extended/v1/address/${ALICE}/balances?until_block=1`);
        assert.equal(aliceAt1.status, 200);
        const {
          estimated_balance: _e,
          pending_balance_inbound: _i,
          pending_balance_outbound: _o,
          ...stxAt1
        } = alice.body.stx;
        assert.deepEqual(aliceAt1.body.stx, stxAt1);
        assert.deepEqual(aliceAt1.body.fungible_tokens, alice.body.fungible_tokens);
        assert.deepEqual(aliceAt1.body.non_fungible_tokens, alice.body.non_fungible_tokens);

        const contract = await get(`/extended/v1/address/${CONTRACT}/balances`);
        assert.equal(contract.status, 200);
        assert.deepEqual(contract.body.stx, {
          balance: '1334',
          estimated_balance: '1334',
          pending_balance_inbound: '0',
          pending_balance_outbound: '0',
          total_sent: '16',
          total_received: '1350',
          total_fees_sent: '0',
          total_miner_rewards_received: '0',
          ...unlocked,
        });
        assert.equal('token_offering_locked' in contract.body, false);
        // as of block 1 the second payout had not happened
        const contractAt1 = await get(`/extended/v1/address/${CONTRACT}/balances?until_block=1`);
        assert.equal(contractAt1.body.stx.balance, '1335');

        const sponsor = (await get(`/extended/v1/address/${SPONSOR}/balances`)).body.stx;
        assert.equal(sponsor.balance, '3766');
        assert.equal(sponsor.total_fees_sent, '1234');
        assert.equal(sponsor.pending_balance_outbound, '50');
        assert.equal(sponsor.estimated_balance, '3716');

        const bob = (await get(`/extended/v1/address/${BOB}/balances`)).body;
        assert.equal(bob.stx.total_fees_sent, '0', 'the origin of a sponsored tx pays no fee');
        assert.equal(bob.stx.balance, '4800');
        assert.equal(bob.stx.pending_balance_inbound, '510');
        assert.deepEqual(bob.fungible_tokens[TENDIES], {
          balance: '1000000',
          total_sent: '0',
          total_received: '1000000',
        });

        const dave = (await get(`/extended/v1/address/${DAVE}/balances`)).body;
        assert.equal(dave.stx.balance, '251');
        assert.equal(dave.stx.pending_balance_outbound, '60', 'a sponsored sender still counts the fee');
        assert.deepEqual(dave.token_offering_locked, {
          total_locked: '0',
          total_unlocked: '7',
          unlock_schedule: [{ amount: '7', block_height: 2 }],
        });
        const daveAt1 = (await get(`/extended/v1/address/${DAVE}/balances?until_block=1`)).body;
        assert.equal(daveAt1.stx.balance, '250');
        assert.deepEqual(daveAt1.token_offering_locked, {
          total_locked: '7',
          total_unlocked: '0',
          unlock_schedule: [{ amount: '7', block_height: 2 }],
        });

        const miner = (await get(`/extended/v1/address/${MINER}/balances`)).body.stx;
        assert.equal(miner.total_miner_rewards_received, '1000');
        assert.equal(miner.balance, '1000');
        const minerAt1 = (await get(`/extended/v1/address/${MINER}/balances?until_block=1`)).body.stx;
        assert.equal(minerAt1.total_miner_rewards_received, '0');

        // until_block by block hash and by index block hash
        const [b1] = chain.blocks;
        for (const hash of [b1.block_hash, b1.index_block_hash]) {
          const at = await get(`/extended/v1/address/${MINER}/balances?until_block=${hash}`);
          assert.equal(at.status, 200);
          assert.equal(at.body.stx.total_miner_rewards_received, '0');
        }
      } finally {
        rmSync(dir, { recursive: true, force: true });
        await close();
      }
    });

    test('balances and transactions: a microblock tx shows with unanchored, then once its block confirms it', async () => {
      const { chain, get, close } = await setup(engine);
      try {
        const mint = await carolCall(0, [ev.stxMint(ALICE, 20_000)]);
        const b1 = await chain.block({ txs: [mint] });
        const pay = await transferTx({ from: 'alice', fee: 100, nonce: 0, to: BOB, amount: 2000 });
        const micro = await chain.microblock({
          parent: b1,
          txs: [{ tx: pay, events: [ev.stxTransfer(ALICE, BOB, 2000)] }],
        });

        const balance = async (who: string, query = '') =>
          (await get(`/extended/v1/address/${who}/balances${query}`)).body.stx.balance;
        assert.equal(await balance(ALICE), '20000');
        assert.equal(await balance(ALICE, '?unanchored=true'), '17900');
        assert.equal(await balance(BOB), '0');
        assert.equal(await balance(BOB, '?unanchored=true'), '2000');

        const bobTxs = (await get(`/extended/v1/address/${BOB}/transactions_with_transfers`)).body;
        assert.deepEqual(bobTxs, { limit: 20, offset: 0, total: 0, results: [] });
        const bobUnanchored = (
          await get(`/extended/v1/address/${BOB}/transactions_with_transfers?unanchored=true`)
        ).body;
        assert.equal(bobUnanchored.total, 1);
        assert.equal(bobUnanchored.results[0].tx.tx_id, pay.txid);
        assert.equal(bobUnanchored.results[0].tx.is_unanchored, true);
        assert.equal(bobUnanchored.results[0].tx.block_height, 2);
        assert.equal(bobUnanchored.results[0].stx_received, '2000');
        const aliceUnanchored = (
          await get(`/extended/v1/address/${ALICE}/transactions_with_transfers?unanchored=true`)
        ).body;
        assert.equal(aliceUnanchored.total, 2);
        assert.deepEqual(
          aliceUnanchored.results.map((r: { tx: { tx_id: string }; stx_sent: string }) => [
            r.tx.tx_id,
            r.stx_sent,
          ]),
          [
            [pay.txid, '2100'],
            [mint.tx.txid, '0'],
          ],
        );
        // one page across the unconfirmed and anchored parts
        const second = (
          await get(
            `/extended/v1/address/${ALICE}/transactions_with_transfers?unanchored=true&limit=1&offset=1`,
          )
        ).body;
        assert.equal(second.total, 2);
        assert.equal(second.results[0].tx.block_height, 1);
        // with_transfers has no height filter: the unconfirmed tx is found
        const single = await get(`/extended/v1/address/${ALICE}/${pay.txid}/with_transfers`);
        assert.equal(single.status, 200);
        assert.equal(single.body.stx_sent, '2100');
        assert.equal(single.body.tx.is_unanchored, true);

        const bad = await get(`/extended/v1/address/${ALICE}/balances?until_block=5&unanchored=true`);
        assert.equal(bad.status, 400);
        assert.equal(
          bad.body.message,
          "can't handle both 'unanchored=true' and 'until_block' in the same request",
        );

        await chain.block({ parent: b1, confirms: [micro] });
        assert.equal(await balance(ALICE), '17900');
        assert.equal(await balance(BOB), '2000');
        assert.equal(await balance(ALICE, '?until_block=1'), '20000');
        const confirmed = (await get(`/extended/v1/address/${BOB}/transactions_with_transfers`)).body;
        assert.equal(confirmed.total, 1);
        assert.equal(confirmed.results[0].tx.tx_id, pay.txid);
        assert.equal(confirmed.results[0].tx.is_unanchored, false);
        assert.equal(confirmed.results[0].tx.microblock_hash, micro.hash);
        assert.equal(confirmed.results[0].tx.block_height, 2);
      } finally {
        await close();
      }
    });

    test('transactions_with_transfers: pages newest first, true totals, stx_sent with fees, transfers of every kind', async () => {
      const { chain, get, close } = await setup(engine);
      try {
        const usdc = `${CONTRACT}::usdc`;
        const punk = `${CONTRACT}::punk1`;
        const mint = await carolCall(0, [
          ev.stxMint(ALICE, 1_000_000),
          ev.stxMint(DAVE, 10_000),
          ev.ftMint(usdc, ALICE, 100),
        ]);
        await chain.block({ txs: [mint] });
        const transfers: MinedTx[] = [];
        for (let nonce = 0; nonce < 2; nonce++) {
          const tx = await transferTx({ from: 'alice', fee: 1234, nonce, to: BOB, amount: 100 });
          transfers.push({ tx, events: [ev.stxTransfer(ALICE, BOB, 100)] });
        }
        await chain.block({ txs: transfers });
        const big = await transferTx({ from: 'alice', fee: 1234, nonce: 2, to: CAROL, amount: 250 });
        const sponsored = await transferTx({
          from: 'alice',
          fee: 1234,
          nonce: 3,
          to: CAROL,
          amount: 100,
          sponsor: { key: 'sponsor', nonce: 0 },
        });
        // dave only sends STX inside carol's contract call: no fee of his
        const daveSends = await carolCall(1, [ev.stxTransfer(DAVE, ALICE, 4321)]);
        await chain.block({
          txs: [
            { tx: big, events: [ev.stxTransfer(ALICE, CAROL, 250)] },
            { tx: sponsored, events: [ev.stxTransfer(ALICE, CAROL, 100)] },
            daveSends,
          ],
        });
        const multi = await callTx({ from: 'alice', fee: 1234, nonce: 4, contract: CONTRACT, fn: 'spray' });
        await chain.block({
          txs: [
            {
              tx: multi,
              events: [
                ev.stxTransfer(ALICE, BOB, 35),
                ev.stxTransfer(ALICE, BOB, 35),
                ev.stxTransfer(ALICE, BOB, 35),
                ev.ftTransfer(usdc, ALICE, BOB, 35),
                ev.nftMint(punk, ALICE, Cl.uint(35)),
                ev.nftTransfer(punk, ALICE, BOB, Cl.uint(35)),
              ],
            },
          ],
        });

        const page = await get(`/extended/v1/address/${ALICE}/transactions_with_transfers?limit=3&offset=0`);
        assert.equal(page.status, 200);
        assert.equal(page.body.limit, 3);
        assert.equal(page.body.offset, 0);
        assert.equal(page.body.total, 7);
        const [first, second, third] = page.body.results;
        assert.equal(first.tx.tx_id, multi.txid);
        assert.deepEqual(first.tx.events, []);
        assert.equal(first.stx_sent, '1339');
        assert.equal(first.stx_received, '0');
        assert.deepEqual(first.stx_transfers, [
          { amount: '35', sender: ALICE, recipient: BOB },
          { amount: '35', sender: ALICE, recipient: BOB },
          { amount: '35', sender: ALICE, recipient: BOB },
        ]);
        assert.deepEqual(first.ft_transfers, [
          { amount: '35', asset_identifier: usdc, sender: ALICE, recipient: BOB },
        ]);
        const u35 = { hex: '0x0100000000000000000000000000000023', repr: 'u35' };
        assert.deepEqual(first.nft_transfers, [
          { value: u35, asset_identifier: punk, sender: ALICE, recipient: BOB },
          { value: u35, asset_identifier: punk, sender: '', recipient: ALICE },
        ]);
        assert.deepEqual(
          [second, third].map((r) => [r.tx.tx_id, r.stx_sent, r.stx_received]),
          [
            [daveSends.tx.txid, '0', '4321'],
            // the fee counts for the sender even when a sponsor paid it (as upstream)
            [sponsored.txid, '1334', '0'],
          ],
        );

        const ids = async (query: string) =>
          (await get(`/extended/v1/address/${ALICE}/transactions_with_transfers?${query}`)).body.results.map(
            (r: { tx: { tx_id: string } }) => r.tx.tx_id,
          );
        assert.deepEqual(await ids('limit=3&offset=3'), [
          big.txid,
          transfers[1].tx.txid,
          transfers[0].tx.txid,
        ]);
        assert.deepEqual(await ids('limit=3&offset=6'), [mint.tx.txid]);
        const past = (await get(`/extended/v1/address/${ALICE}/transactions_with_transfers?offset=7`)).body;
        assert.deepEqual(
          past,
          { limit: 20, offset: 7, total: 7, results: [] },
          'the true total past the end',
        );
        const zero = (await get(`/extended/v1/address/${ALICE}/transactions_with_transfers?limit=0`)).body;
        assert.equal(zero.limit, 20);
        assert.equal(zero.results.length, 7);

        // as of block 2: the mint and the three transfers
        const at2 = (
          await get(`/extended/v1/address/${ALICE}/transactions_with_transfers?until_block=2&limit=2`)
        ).body;
        assert.equal(at2.total, 3);
        assert.deepEqual(
          at2.results.map((r: { tx: { tx_id: string } }) => r.tx.tx_id),
          [transfers[1].tx.txid, transfers[0].tx.txid],
        );
        // one height, without paging
        const h3 = (
          await get(`/extended/v1/address/${ALICE}/transactions_with_transfers?height=3&limit=1&offset=5`)
        ).body;
        assert.equal(h3.limit, 1);
        assert.equal(h3.offset, 5);
        assert.equal(h3.total, 3);
        assert.equal(h3.results.length, 3);

        const dave = (await get(`/extended/v1/address/${DAVE}/transactions_with_transfers`)).body;
        assert.equal(dave.total, 2);
        assert.equal(dave.results[0].stx_sent, '4321');
        // the sponsor is not a party of the tx it paid for
        const sponsor = (
          await get(`/extended/v1/address/${addressOf('sponsor')}/transactions_with_transfers`)
        ).body;
        assert.equal(sponsor.total, 0);

        const withTransfers = await get(`/extended/v1/address/${BOB}/${multi.txid}/with_transfers`);
        assert.equal(withTransfers.status, 200);
        assert.equal(withTransfers.body.stx_sent, '0');
        assert.equal(withTransfers.body.stx_received, '105');
        assert.equal(withTransfers.body.stx_transfers.length, 3);
        assert.deepEqual(withTransfers.body.ft_transfers, first.ft_transfers);
        assert.deepEqual(withTransfers.body.nft_transfers, [first.nft_transfers[0]]);
        assert.equal(withTransfers.body.tx.tx_id, multi.txid);
        // without 0x, any case
        const bare = await get(
          `/extended/v1/address/${BOB}/${multi.txid.slice(2).toUpperCase()}/with_transfers`,
        );
        assert.equal(bare.status, 200);
        const missing = await get(`/extended/v1/address/${DAVE}/${multi.txid}/with_transfers`);
        assert.equal(missing.status, 404);
        assert.equal(missing.body.message, 'No matching transaction found');
      } finally {
        await close();
      }
    });

    test('invalid principals, limits, heights and until_block values answer 400 saying what is wrong', async () => {
      const { chain, get, close } = await setup(engine);
      try {
        await chain.block({ txs: [await carolCall(0, [ev.stxMint(ALICE, 1)])] });
        const badChecksum = ALICE.slice(0, -1) + (ALICE.endsWith('A') ? 'B' : 'A');
        const cases: [string, number, RegExp][] = [
          [
            `/extended/v1/address/${badChecksum}/balances`,
            400,
            /^path parameter principal must be a Stacks address or contract id: ".*" is not a c32check/,
          ],
          [
            `/extended/v1/address/${ALICE}.1bad/balances`,
            400,
            /contract name "1bad" must start with a letter/,
          ],
          [
            `/extended/v1/address/${ALICE}.${'a'.repeat(129)}/transactions_with_transfers`,
            400,
            /contract name "a+" must .* 1 to 128 characters/,
          ],
          [`/extended/v1/address/${badChecksum}.hello/balances`, 400, /".*" is not a c32check-encoded/],
          [
            `/extended/v1/address/not-a-principal/balances`,
            400,
            /^path parameter principal must be a Stacks address \(28 to 41 digits and capital letters but I, L, O, U, e\.g\. S\w+\) or a contract id \(<address>\.<contract name>\); got "not-a-principal"$/,
          ],
          [
            `/extended/v1/address/${ALICE}/transactions_with_transfers?limit=51`,
            400,
            /^query parameter limit must be 50 or less; got 51$/,
          ],
          [
            `/extended/v1/address/${ALICE}/transactions_with_transfers?limit=-1`,
            400,
            /^query parameter limit must be 0 or more; got -1$/,
          ],
          [
            `/extended/v1/address/${ALICE}/transactions_with_transfers?limit=abc`,
            400,
            /^query parameter limit must be a whole number; got "abc"$/,
          ],
          [
            `/extended/v1/address/${ALICE}/transactions_with_transfers?offset=-1`,
            400,
            /^query parameter offset must be 0 or more; got -1$/,
          ],
          [
            `/extended/v1/address/${ALICE}/transactions_with_transfers?height=1.5`,
            400,
            /^query parameter height must be a whole number; got "1\.5"$/,
          ],
          [
            `/extended/v1/address/${ALICE}/balances?unanchored=1`,
            400,
            /^query parameter unanchored must be true or false; got "1"$/,
          ],
          [
            `/extended/v1/address/${ALICE}/transactions_with_transfers?height=1&until_block=1`,
            400,
            /^can't handle until_block and block_height in the same request$/,
          ],
          [
            `/extended/v1/address/${ALICE}/${'0x' + 'ab'.repeat(31)}/with_transfers`,
            400,
            /^path parameter tx_id must be a transaction id \(64 hex digits, 0x optional\); got "0x(ab){31}"$/,
          ],
          [
            `/extended/v1/address/${ALICE}/not-hex/with_transfers`,
            400,
            /^path parameter tx_id must be a transaction id \(64 hex digits, 0x optional\); got "not-hex"$/,
          ],
          [
            `/extended/v1/address/${ALICE}/balances?until_block=0x${'cd'.repeat(32)}`,
            404,
            /^block not found with hash$/,
          ],
        ];
        for (const value of ['abc', '12abc', '-1', '1.5', '0x1234', ' 1', `${'ab'.repeat(32)}`]) {
          for (const route of ['balances', 'transactions_with_transfers']) {
            cases.push([
              `/extended/v1/address/${ALICE}/${route}?until_block=${encodeURIComponent(value)}`,
              400,
              /^query parameter until_block must be a block height \(a whole number, 0 or more\) or a block hash or index block hash/,
            ]);
          }
        }
        for (const [url, status, message] of cases) {
          const res = await get(url);
          assert.equal(res.status, status, url);
          assert.equal(res.body.statusCode, status, url);
          assert.match(res.body.message, message, url);
        }
        // what is valid: 0, a height above the tip, an empty until_block (absent)
        for (const value of ['0', '99999999999', '']) {
          const res = await get(`/extended/v1/address/${ALICE}/balances?until_block=${value}`);
          assert.equal(res.status, 200, value);
        }
        const far = (await get(`/extended/v1/address/${ALICE}/transactions_with_transfers?offset=${2 ** 52}`))
          .body;
        assert.deepEqual(far, { limit: 20, offset: 2 ** 52, total: 1, results: [] });
        const tooFar = await get(
          `/extended/v1/address/${ALICE}/transactions_with_transfers?offset=1${'0'.repeat(20)}`,
        );
        assert.equal(tooFar.status, 400);
        assert.equal(
          tooFar.body.message,
          `query parameter offset must be ${Number.MAX_SAFE_INTEGER} or less; got 100000000000000000000`,
        );
        const atZero = (await get(`/extended/v1/address/${ALICE}/transactions_with_transfers?until_block=0`))
          .body;
        assert.equal(atZero.total, 0);
      } finally {
        await close();
      }
    });

    test('a reorg corrects balances, transaction lists and their totals', async () => {
      const { chain, get, close } = await setup(engine);
      try {
        const mint = await carolCall(0, [ev.stxMint(ALICE, 10_000)]);
        const b1 = await chain.block({ txs: [mint] });
        const toBob = await transferTx({ from: 'alice', fee: 10, nonce: 0, to: BOB, amount: 500 });
        const a2 = await chain.block({
          parent: b1,
          txs: [{ tx: toBob, events: [ev.stxTransfer(ALICE, BOB, 500)] }],
        });
        const again = await transferTx({ from: 'alice', fee: 10, nonce: 1, to: BOB, amount: 1 });
        await chain.block({ parent: a2, txs: [{ tx: again, events: [ev.stxTransfer(ALICE, BOB, 1)] }] });
        assert.equal((await get(`/extended/v1/address/${BOB}/balances`)).body.stx.balance, '501');
        assert.equal((await get(`/extended/v1/address/${ALICE}/transactions_with_transfers`)).body.total, 3);

        // a competing fork from block 1 sends alice's first STX to dave instead, and wins at height 4
        const toDave = await transferTx({ from: 'alice', fee: 20, nonce: 0, to: DAVE, amount: 700 });
        const b2 = await chain.block({
          parent: b1,
          txs: [{ tx: toDave, events: [ev.stxTransfer(ALICE, DAVE, 700)] }],
        });
        const b3 = await chain.block({ parent: b2 });
        assert.equal((await get(`/extended/v1/address/${DAVE}/balances`)).body.stx.balance, '0', 'not yet');
        await chain.block({ parent: b3 });

        const alice = (await get(`/extended/v1/address/${ALICE}/balances`)).body.stx;
        assert.equal(alice.total_sent, '700');
        assert.equal(alice.total_fees_sent, '20');
        assert.equal(alice.balance, '9280');
        assert.equal((await get(`/extended/v1/address/${BOB}/balances`)).body.stx.balance, '0');
        assert.equal((await get(`/extended/v1/address/${DAVE}/balances`)).body.stx.balance, '700');
        const bobTxs = (await get(`/extended/v1/address/${BOB}/transactions_with_transfers`)).body;
        assert.deepEqual(bobTxs, { limit: 20, offset: 0, total: 0, results: [] });
        const aliceTxs = (await get(`/extended/v1/address/${ALICE}/transactions_with_transfers`)).body;
        assert.equal(aliceTxs.total, 2);
        assert.deepEqual(
          aliceTxs.results.map((r: { tx: { tx_id: string; block_hash: string } }) => [
            r.tx.tx_id,
            r.tx.block_hash,
          ]),
          [
            [toDave.txid, b2.block_hash],
            [mint.tx.txid, b1.block_hash],
          ],
        );
        const daveTxs = (await get(`/extended/v1/address/${DAVE}/transactions_with_transfers?until_block=2`))
          .body;
        assert.equal(daveTxs.total, 1);
        // the orphaned tx is not found for bob any more; the block hash of an orphan still names a height
        assert.equal((await get(`/extended/v1/address/${BOB}/${toBob.txid}/with_transfers`)).status, 404);
        const atOrphan = await get(
          `/extended/v1/address/${ALICE}/balances?until_block=${a2.index_block_hash}`,
        );
        assert.equal(atOrphan.status, 200);
        assert.equal(atOrphan.body.stx.total_sent, '700', 'as of height 2 of the canonical chain');
      } finally {
        await close();
      }
    });

    test('STX lock state: stx_lock events, pox stack-increase / stack-extend / handle-unlock, expiry and force-unlock', async () => {
      const { chain, get, close } = await setup(engine);
      try {
        await chain.block({
          txs: [
            await carolCall(0, [
              ev.stxMint(ALICE, 10_000_000),
              ev.stxMint(BOB, 10_000_000),
              ev.stxMint(DAVE, 10),
            ]),
          ],
        });
        const poxPrint = (
          contract: string,
          name: string,
          stacker: string,
          before: { locked: number; unlock: number },
          data: Record<string, number>,
        ) =>
          ev.print(
            contract,
            Cl.ok(
              Cl.tuple({
                name: Cl.stringAscii(name),
                stacker: Cl.standardPrincipal(stacker),
                balance: Cl.uint(10_000_000 - before.locked),
                locked: Cl.uint(before.locked),
                'burnchain-unlock-height': Cl.uint(before.unlock),
                data: Cl.tuple(Object.fromEntries(Object.entries(data).map(([k, v]) => [k, Cl.uint(v)]))),
              }),
            ),
          );
        const stack = await callTx({ from: 'alice', fee: 10, nonce: 0, contract: POX4, fn: 'stack-stx' });
        const bobStack = await callTx({ from: 'bob', fee: 10, nonce: 0, contract: POX4, fn: 'stack-stx' });
        const daveStack = await callTx({ from: 'dave', fee: 1, nonce: 0, contract: POX2, fn: 'stack-stx' });
        const b2 = await chain.block({
          txs: [
            {
              tx: stack,
              events: [
                ev.stxLock(ALICE, 5_000_000, 200, POX4),
                poxPrint(
                  POX4,
                  'stack-stx',
                  ALICE,
                  { locked: 0, unlock: 0 },
                  {
                    'lock-amount': 5_000_000,
                    'unlock-burn-height': 200,
                  },
                ),
              ],
            },
            // bob's lock ends at burn height 104 (block 4)
            { tx: bobStack, events: [ev.stxLock(BOB, 1_000_000, 104, POX4)] },
            // dave stacked in pox-2 until 500; pox-2 locks are force-unlocked at 104 below
            { tx: daveStack, events: [ev.stxLock(DAVE, 5, 500, POX2)] },
          ],
        });
        const lockOf = async (who: string, query = '') => {
          const { lock_tx_id, locked, lock_height, burnchain_lock_height, burnchain_unlock_height } = (
            await get(`/extended/v1/address/${who}/balances${query}`)
          ).body.stx;
          return { lock_tx_id, locked, lock_height, burnchain_lock_height, burnchain_unlock_height };
        };
        assert.deepEqual(await lockOf(ALICE), {
          lock_tx_id: stack.txid,
          locked: '5000000',
          lock_height: 2,
          burnchain_lock_height: b2.burn_block_height,
          burnchain_unlock_height: 200,
        });
        const increase = await callTx({
          from: 'alice',
          fee: 10,
          nonce: 1,
          contract: POX4,
          fn: 'stack-increase',
        });
        await chain.block({
          txs: [
            {
              tx: increase,
              events: [
                poxPrint(
                  POX4,
                  'stack-increase',
                  ALICE,
                  { locked: 5_000_000, unlock: 200 },
                  {
                    'increase-by': 1_000_000,
                    'total-locked': 6_000_000,
                  },
                ),
              ],
            },
          ],
        });
        const extend = await callTx({ from: 'alice', fee: 10, nonce: 2, contract: POX4, fn: 'stack-extend' });
        await chain.block({
          txs: [
            {
              tx: extend,
              events: [
                poxPrint(
                  POX4,
                  'stack-extend',
                  ALICE,
                  { locked: 6_000_000, unlock: 200 },
                  {
                    'extend-count': 1,
                    'unlock-burn-height': 250,
                  },
                ),
              ],
            },
          ],
        });
        assert.deepEqual(await lockOf(ALICE), {
          lock_tx_id: extend.txid,
          locked: '6000000',
          lock_height: 4,
          burnchain_lock_height: 104,
          burnchain_unlock_height: 250,
        });
        assert.deepEqual(await lockOf(ALICE, '?until_block=3'), {
          lock_tx_id: increase.txid,
          locked: '6000000',
          lock_height: 3,
          burnchain_lock_height: 103,
          burnchain_unlock_height: 200,
        });
        assert.equal((await lockOf(ALICE, '?until_block=2')).locked, '5000000');
        assert.equal((await lockOf(BOB)).locked, '1000000', 'burn height 104: still locked');
        assert.equal((await lockOf(DAVE)).locked, '5');

        // block 5 (burn height 105): alice is unlocked by the node, bob's lock ran out, pox-2 locks ended at 104
        const unlock = await callTx({ from: 'carol', fee: 10, nonce: 1, contract: POX4, fn: 'noop' });
        await chain.block({
          txs: [
            {
              tx: unlock,
              events: [
                poxPrint(
                  POX4,
                  'handle-unlock',
                  ALICE,
                  { locked: 6_000_000, unlock: 250 },
                  {
                    'first-cycle-locked': 1,
                    'first-unlocked-cycle': 2,
                  },
                ),
              ],
            },
          ],
          poxUnlockHeights: { v2: 104 },
        });
        assert.deepEqual(await lockOf(ALICE), unlocked);
        assert.deepEqual(await lockOf(BOB), unlocked);
        assert.deepEqual(await lockOf(DAVE), unlocked, 'past the pox-2 force-unlock height');
        assert.equal((await lockOf(ALICE, '?until_block=4')).locked, '6000000');
        assert.equal((await lockOf(BOB, '?until_block=4')).locked, '1000000');
        assert.equal(
          (await lockOf(DAVE, '?until_block=4')).locked,
          '5',
          'burn 104: not past the force-unlock',
        );
        // locked STX are part of the balance (not subtracted)
        assert.equal((await get(`/extended/v1/address/${ALICE}/balances`)).body.stx.balance, '9999970');
      } finally {
        await close();
      }
    });

    test('the running totals and ordinals agree with sums over the rows, after the reorgs of a recorded chain', async () => {
      const store = await openTestStore(engine);
      try {
        await replayFile(
          new Ingestor(store, { isMainnet: true, logger: silentLogger }),
          fixtureFile('mainnet-reorg-scenario1'),
        );
        const [{ tip }] = await store.sql<{ tip: number }[]>`SELECT block_height AS tip FROM chain_tip`;
        const principals = (
          await store.sql<{ principal: string }[]>`SELECT principal FROM principal_stats ORDER BY principal`
        ).map((r) => r.principal);
        assert.ok(principals.length > 50);
        const current = { tip, height: tip };
        // a scope below a (pretend) higher tip is summed from the rows
        const summed = { tip: tip + 1, height: tip };
        for (const principal of principals) {
          const a = await getAccountBalances(store.sql, principal, current, { withPending: false });
          const b = await getAccountBalances(store.sql, principal, summed, { withPending: false });
          assert.deepEqual([a.stx, a.fungible, a.nonFungible], [b.stx, b.fungible, b.nonFungible], principal);
          const pageA = await listAccountTxs(store.sql, principal, current, { limit: 50, offset: 0 });
          const pageB = await listAccountTxs(store.sql, principal, summed, { limit: 50, offset: 0 });
          assert.deepEqual(pageA, pageB, principal);
          const [{ n }] = await store.sql<{ n: number }[]>`
            SELECT count(*)::int AS n FROM principal_txs
            WHERE principal = ${principal} AND canonical AND microblock_canonical AND index_block_hash <> ''`;
          assert.equal(pageA.total, n, principal);
        }
      } finally {
        await store.close();
      }
    });
  });
}

describe('vesting file', () => {
  test('rows address,value,blocks, Bitcoin addresses converted, a chainstate section, errors naming the line', () => {
    const text = ['# schedule', 'address,value,blocks', `${ALICE},10,1`, `${c32ToB58(BOB)},20,2`, ''].join(
      '\n',
    );
    assert.deepEqual(parseVestingFile(text), [
      { address: ALICE, value: '10', block: 1 },
      { address: BOB, value: '20', block: 2 },
    ]);
    const section = `junk\n-----BEGIN STX VESTING-----\n${ALICE},5,9\n-----END STX VESTING-----\nmore junk\n`;
    assert.deepEqual(parseVestingFile(section), [{ address: ALICE, value: '5', block: 9 }]);
    assert.throws(
      () => parseVestingFile(`${ALICE},10\n`, 'v.csv'),
      (err: unknown) => {
        assert.ok(err instanceof VestingFileError);
        assert.match(err.message, /^v\.csv line 1: expected "address,value,blocks"/);
        return true;
      },
    );
    assert.throws(
      () => parseVestingFile(`x\n${ALICE},1.5,3\n`.replace('x\n', '')),
      /value "1.5" is not a whole amount/,
    );
    assert.throws(() => parseVestingFile(`nope,1,3\n`), /"nope" is not a Stacks or Bitcoin address/);
  });
});
