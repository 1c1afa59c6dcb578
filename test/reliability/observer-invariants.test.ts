import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, describe, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { Ingestor } from '../../src/ingest/ingestor.js';
import { buildObserverServer } from '../../src/ingest/observer-server.js';
import type { Engine } from '../../src/store/db.js';
import type { Store } from '../../src/store/store.js';
import { TestChain, addressOf, transferWithEvent, type ObserverMessage } from '../support/chain.js';
import { openTestStore, silentLogger, stopOwnCluster } from '../support/database.js';
import { INDEX_TABLES, databaseDigest } from '../support/digest.js';
import { testEngines } from '../support/engines.js';

// What a stacks-node guarantees about its messages (src/ingest/message-checks.ts): a message breaking one is
// refused with 400 naming the rule, and leaves no trace, not even in the raw message log (so it is not taken
// as delivered: the same message sent again is refused again). Each case here was applied before the checks.

after(stopOwnCluster);

type Json = Record<string, unknown>;
type Tx = Json & { txid: string; tx_index: number; raw_tx: string; microblock_sequence?: number };
type Ev = Json & { txid: string; event_index: number };
type Payload = Json & { transactions: Tx[]; events: Ev[] };

async function openObserver(engine: Engine): Promise<{ store: Store; app: FastifyInstance }> {
  const store = await openTestStore(engine);
  const ingestor = new Ingestor(store, { isMainnet: false, logger: silentLogger });
  return { store, app: buildObserverServer({ ingestor, logger: silentLogger, bodyLimitBytes: 64 << 20 }) };
}

function post(app: FastifyInstance, url: string, payload: string) {
  return app.inject({ method: 'POST', url, payload, headers: { 'content-type': 'application/json' } });
}

/**
 * The message with `edit` applied to a copy of its payload. A block edited gets an index_block_hash of its
 * own (unless `keepHash`), so one wrongly accepted cannot make the next one look known.
 */
function edited(
  message: ObserverMessage<Json>,
  edit: (p: Payload) => void,
  { keepHash = false } = {},
): string {
  const payload = structuredClone(message.payload) as Payload;
  edit(payload);
  if (message.path === '/new_block' && !keepHash) {
    payload.index_block_hash = '0x' + createHash('sha256').update(JSON.stringify(payload)).digest('hex');
  }
  return JSON.stringify(payload);
}

async function tipHeight(store: Store): Promise<number> {
  const [tip] = await store.sql<{ block_height: number }[]>`SELECT block_height FROM chain_tip`;
  return tip.block_height;
}

/** A chain of signed transfers (each with its STX event), built only: nothing sent. */
class Transfers {
  readonly chain = new TestChain();
  private nonce = 0;

  async txs(n: number) {
    const txs = [];
    for (let i = 0; i < n; i++) {
      txs.push(
        await transferWithEvent({
          from: 'alice',
          to: addressOf('bob'),
          amount: 100 + this.nonce,
          fee: 180,
          nonce: this.nonce++,
        }),
      );
    }
    return txs;
  }

  async block(n = 2) {
    return this.chain.buildBlock({ txs: await this.txs(n) });
  }
}

for (const engine of testEngines(import.meta.url)) {
  describe(`observer messages that break a node's guarantees (${engine})`, () => {
    /** Posts `body`, expects 400 with the JSON error naming `message`, and no change anywhere. */
    async function refused(
      ctx: { store: Store; app: FastifyInstance },
      path: string,
      body: string,
      message: RegExp,
    ) {
      const before = await databaseDigest(ctx.store.sql, INDEX_TABLES);
      const res = await post(ctx.app, path, body);
      assert.equal(res.statusCode, 400, res.body);
      const json = res.json<{ statusCode: number; error: string; message: string }>();
      assert.equal(json.statusCode, 400);
      assert.equal(json.error, 'Bad Request');
      assert.match(json.message, message);
      assert.deepEqual(await databaseDigest(ctx.store.sql, INDEX_TABLES), before, `${path} wrote something`);
    }

    test('a block 1,000,000 high on the tip is refused, and the real chain goes on (issue 14, item 2)', async () => {
      const ctx = await openObserver(engine);
      try {
        const t = new Transfers();
        for (let h = 1; h <= 3; h++) {
          assert.equal((await post(ctx.app, '/new_block', (await t.block()).message.body)).statusCode, 200);
        }
        const next = await t.block(3);
        const jump = edited(next.message, (p) => (p.block_height = 1_000_000));
        const heightRule =
          /block_height is not its parent's height \+ 1 \(the parent 0x[0-9a-f]{64} is at height 3\)/;
        const jumpRule = new RegExp(`^block 1000000 \\(0x[0-9a-f]{64}\\): ${heightRule.source}$`);
        await refused(ctx, '/new_block', jump, jumpRule);
        // Sent again (the node retries what it was refused): refused again, it was never taken as delivered.
        await refused(ctx, '/new_block', jump, jumpRule);
        assert.equal(await tipHeight(ctx.store), 3);

        // One below the parent + 1, and the parent's own height, on the tip and off it (a fork on block 2).
        await refused(
          ctx,
          '/new_block',
          edited(next.message, (p) => (p.block_height = 3)),
          heightRule,
        );
        await refused(
          ctx,
          '/new_block',
          edited(next.message, (p) => (p.block_height = 5)),
          /height 3\)/,
        );
        const fork = t.chain.buildBlock({ parent: t.chain.blocks[1], txs: [] }).message;
        await refused(
          ctx,
          '/new_block',
          edited(fork, (p) => (p.block_height = 9)),
          /block_height is not its parent's height \+ 1 \(the parent 0x[0-9a-f]{64} is at height 2\)/,
        );

        // The real blocks keep coming: each becomes the tip.
        const res = await post(ctx.app, '/new_block', next.message.body);
        assert.equal(res.statusCode, 200, res.body);
        assert.equal(res.json().outcome, 'applied');
        assert.equal(await tipHeight(ctx.store), 4);
        assert.equal((await post(ctx.app, '/new_block', (await t.block()).message.body)).statusCode, 200);
        assert.equal(await tipHeight(ctx.store), 5);
        const [blocks] = await ctx.store.sql<{ n: number; canonical: number; top: number }[]>`
          SELECT count(*)::int AS n, count(*) FILTER (WHERE canonical)::int AS canonical,
            max(block_height) AS top FROM blocks`;
        assert.deepEqual(blocks, { n: 5, canonical: 5, top: 5 });
      } finally {
        await ctx.app.close();
        await ctx.store.close();
      }
    });

    test("a block naming another block hash as its parent's, or mined in a lower burn block: 400", async () => {
      const ctx = await openObserver(engine);
      try {
        const t = new Transfers();
        // The first block indexed is taken as given (a replay may start anywhere): its child may have a
        // lower burn height, as in the recorded mainnet-reorg-scenario1 (666067, then 666054).
        const root = await t.block();
        assert.equal((await post(ctx.app, '/new_block', root.message.body)).statusCode, 200);
        const second = await t.block();
        const below = edited(second.message, (p) => (p.burn_block_height = 50), { keepHash: true });
        assert.equal((await post(ctx.app, '/new_block', below)).statusCode, 200);

        const third = await t.block();
        await refused(
          ctx,
          '/new_block',
          edited(third.message, (p) => (p.burn_block_height = 49)),
          /block 3 \(0x[0-9a-f]{64}\): burn_block_height 49 is below its parent's \(50\)/,
        );
        await refused(
          ctx,
          '/new_block',
          edited(third.message, (p) => (p.parent_block_hash = root.message.payload.block_hash)),
          /parent_block_hash 0x[0-9a-f]{64} is not the block hash of its parent/,
        );
        // The same burn block as the parent (a Nakamoto tenure's blocks share one): applied.
        const sameBurn = edited(third.message, (p) => (p.burn_block_height = 50), { keepHash: true });
        const res = await post(ctx.app, '/new_block', sameBurn);
        assert.equal(res.statusCode, 200, res.body);
        assert.equal(await tipHeight(ctx.store), 3);
      } finally {
        await ctx.app.close();
        await ctx.store.close();
      }
    });

    test('tx indexes not 0..n-1, event indexes repeated, an event of no tx, a txid not the hash: 400', async () => {
      const ctx = await openObserver(engine);
      try {
        const t = new Transfers();
        assert.equal((await post(ctx.app, '/new_block', (await t.block()).message.body)).statusCode, 200);
        const next = (await t.block(3)).message;
        const where = /^block 2 \(0x[0-9a-f]{64}\): /;
        const cases: [string, (p: Payload) => void, RegExp][] = [
          ['a tx_index twice', (p) => (p.transactions[2].tx_index = 1), /tx_index 1 appears twice/],
          [
            'a tx_index past the count',
            (p) => (p.transactions[0].tx_index = 3),
            /tx_index 3 of 0x[0-9a-f]{64} is out of range \(the block has 3 transactions, numbered 0\.\.2\)/,
          ],
          ['an event_index twice', (p) => (p.events[2].event_index = 0), /event_index 0 appears twice/],
          [
            'one (txid, event_index) twice',
            (p) => p.events.push({ ...p.events[0] }),
            /event_index 0 appears twice/,
          ],
          [
            'an event of a tx not in the block',
            (p) => (p.events[1].txid = '0x' + 'ab'.repeat(32)),
            /event 1 belongs to transaction 0xabab[0-9a-f]{60}, which is not in the message/,
          ],
        ];
        for (const [name, edit, message] of cases) {
          await refused(ctx, '/new_block', edited(next, edit), new RegExp(where.source + message.source));
          assert.ok(true, name);
        }

        // Item 8: a tx whose id is not the hash of its bytes, its events renamed with it (consistent
        // otherwise), and a tx given another tx's bytes.
        const fakeId = '0x' + 'cd'.repeat(32);
        const realId = next.payload.transactions as Tx[];
        await refused(
          ctx,
          '/new_block',
          edited(next, (p) => {
            p.transactions[1].txid = fakeId;
            for (const e of p.events) if (e.txid === realId[1].txid) e.txid = fakeId;
          }),
          new RegExp(
            `transaction ${fakeId}: its id is not the hash of its raw_tx \\(which hashes to 0x[0-9a-f]{64}\\)`,
          ),
        );
        await refused(
          ctx,
          '/new_block',
          edited(next, (p) => (p.transactions[1].raw_tx = p.transactions[2].raw_tx)),
          new RegExp(
            `transaction ${realId[1].txid}: its id is not the hash of its raw_tx \\(which hashes to ${realId[2].txid}\\)`,
          ),
        );

        // The genuine block goes in.
        const res = await post(ctx.app, '/new_block', next.body);
        assert.equal(res.statusCode, 200, res.body);
        assert.equal(await tipHeight(ctx.store), 2);
      } finally {
        await ctx.app.close();
        await ctx.store.close();
      }
    });

    test('microblocks: sequences that disagree, repeated indexes, a txid not the hash: 400', async () => {
      const ctx = await openObserver(engine);
      try {
        const t = new Transfers();
        const tip = await t.block();
        assert.equal((await post(ctx.app, '/new_block', tip.message.body)).statusCode, 200);
        const first = t.chain.buildMicroblock({ parent: tip.block, txs: await t.txs(2) });
        const second = t.chain.buildMicroblock({
          parent: tip.block,
          previous: first.microblock,
          txs: await t.txs(1),
        });
        // One message holding both microblocks of the stream.
        const both = {
          ...first.message,
          payload: {
            ...first.message.payload,
            transactions: [
              ...(first.message.payload.transactions as Tx[]),
              ...(second.message.payload.transactions as Tx[]),
            ],
            events: [
              ...(first.message.payload.events as Ev[]),
              ...(second.message.payload.events as Ev[]).map((e) => ({
                ...e,
                event_index: e.event_index + 2,
              })),
            ],
          },
        };
        const where = /^microblocks on 0x[0-9a-f]{64}: /;
        const cases: [(p: Payload) => void, RegExp][] = [
          [
            (p) => (p.transactions[1].microblock_sequence = 1),
            /the transactions of microblock 0x[0-9a-f]{64} disagree on its sequence or parent/,
          ],
          [(p) => (p.transactions[1].tx_index = 0), /tx_index 0 appears twice in microblock 0x[0-9a-f]{64}/],
          [
            (p) => (p.transactions[2].microblock_sequence = 2),
            /microblock 0x[0-9a-f]{64} has sequence 2, its parent 0x[0-9a-f]{64} 0/,
          ],
          [(p) => (p.events[1].event_index = 0), /event_index 0 appears twice/],
        ];
        for (const [edit, message] of cases) {
          await refused(
            ctx,
            '/new_microblocks',
            edited(both, edit),
            new RegExp(where.source + message.source),
          );
        }
        const firstId = (both.payload.transactions as Tx[])[0].txid;
        await refused(
          ctx,
          '/new_microblocks',
          edited(both, (p) => (p.transactions[0].raw_tx = p.transactions[1].raw_tx)),
          new RegExp(`^transaction ${firstId}: its id is not the hash of its raw_tx`),
        );
        const res = await post(ctx.app, '/new_microblocks', JSON.stringify(both.payload));
        assert.equal(res.statusCode, 200, res.body);
        assert.equal(res.json().outcome, 'applied');
        const [staged] = await ctx.store.sql<{ n: number }[]>`
          SELECT count(*)::int AS n FROM txs WHERE index_block_hash = '' AND microblock_canonical`;
        assert.equal(staged.n, 3);
      } finally {
        await ctx.app.close();
        await ctx.store.close();
      }
    });

    test('a transaction is mined at most once on a chain: a block mining one again is refused', async () => {
      const ctx = await openObserver(engine);
      try {
        const t = new Transfers();
        const firstTxs = await t.txs(2);
        const first = t.chain.buildBlock({ txs: firstTxs });
        const secondTxs = await t.txs(2);
        const second = t.chain.buildBlock({ txs: secondTxs });
        for (const b of [first, second]) {
          assert.equal((await post(ctx.app, '/new_block', b.message.body)).statusCode, 200);
        }
        const balances = await databaseDigest(ctx.store.sql, ['stx_balances', 'principal_stats']);
        // On the tip, beside a new tx.
        const [fresh] = await t.txs(1);
        await refused(
          ctx,
          '/new_block',
          t.chain.buildBlock({ txs: [fresh, firstTxs[1]] }).message.body,
          /^block 3 \(0x[0-9a-f]{64}\): transaction 0x[0-9a-f]{64} is already mined on its chain, in the block at height 1$/,
        );
        // A fork of the tip (on block 1) mining block 1's tx again: its own chain holds it too.
        await refused(
          ctx,
          '/new_block',
          t.chain.buildBlock({ parent: first.block, txs: [firstTxs[0]] }).message.body,
          /^block 2 .*is already mined on its chain, in the block at height 1$/,
        );
        assert.equal(await tipHeight(ctx.store), 2);
        assert.deepEqual(await databaseDigest(ctx.store.sql, ['stx_balances', 'principal_stats']), balances);

        // The same txs in two competing forks are what a reorg looks like: a fork of block 2 on block 1
        // mining block 2's txs goes in, and its child makes it canonical, each tx mined once.
        const fork = t.chain.buildBlock({ parent: first.block, txs: secondTxs });
        const child = t.chain.buildBlock({ parent: fork.block, txs: [] });
        for (const b of [fork, child]) {
          const res = await post(ctx.app, '/new_block', b.message.body);
          assert.equal(res.statusCode, 200, res.body);
          assert.equal(res.json().outcome, 'applied');
        }
        assert.equal(await tipHeight(ctx.store), 3);
        const minedOnce = await ctx.store.sql<{ tx_id: string; n: number }[]>`
          SELECT tx_id, count(*)::int AS n FROM txs WHERE canonical GROUP BY tx_id HAVING count(*) > 1`;
        assert.deepEqual([...minedOnce], []);

        // A fork that grows while another chain is canonical is checked when it would take over: one of its
        // blocks mining block 1's tx again is taken as a fork, but the block that would make it canonical
        // is refused, and nothing changes.
        const deep2 = t.chain.buildBlock({ parent: first.block, txs: await t.txs(1) });
        const deep3 = t.chain.buildBlock({ parent: deep2.block, txs: [firstTxs[0]] });
        const deep4 = t.chain.buildBlock({ parent: deep3.block, txs: [] });
        for (const b of [deep2, deep3]) {
          assert.equal((await post(ctx.app, '/new_block', b.message.body)).statusCode, 200);
        }
        await refused(
          ctx,
          '/new_block',
          deep4.message.body,
          /^the fork ending at block 3 \(0x[0-9a-f]{64}\) mines transaction 0x[0-9a-f]{64} a second time \(first in the block at height 1\): it cannot become canonical$/,
        );
        assert.equal(await tipHeight(ctx.store), 3);
      } finally {
        await ctx.app.close();
        await ctx.store.close();
      }
    });

    test('a known block re-serialized is a duplicate that changes nothing; with other content it is reannounced: 200, the stored block kept', async () => {
      const ctx = await openObserver(engine);
      try {
        const t = new Transfers();
        assert.equal((await post(ctx.app, '/new_block', (await t.block()).message.body)).statusCode, 200);
        const next = (await t.block(3)).message;
        assert.equal((await post(ctx.app, '/new_block', next.body)).json().outcome, 'applied');
        const applied = await databaseDigest(ctx.store.sql, INDEX_TABLES);

        // The same block, its keys in reverse order, its txs and events listed backwards, pretty-printed.
        const reversedKeys = (v: unknown): unknown =>
          Array.isArray(v)
            ? v.map(reversedKeys)
            : v !== null && typeof v === 'object'
              ? Object.fromEntries(
                  Object.entries(v)
                    .reverse()
                    .map(([k, x]) => [k, reversedKeys(x)]),
                )
              : v;
        const payload = structuredClone(next.payload) as Payload;
        payload.transactions.reverse();
        payload.events.reverse();
        const reserialized = JSON.stringify(reversedKeys(payload), null, 2);
        assert.notEqual(reserialized, next.body);
        for (let i = 0; i < 2; i++) {
          const res = await post(ctx.app, '/new_block', reserialized);
          assert.equal(res.statusCode, 200, res.body);
          assert.equal(res.json().outcome, 'duplicate');
          // Nothing written, not even a raw-log row: the log holds the block once.
          assert.deepEqual(await databaseDigest(ctx.store.sql, INDEX_TABLES), applied);
        }

        // The same index_block_hash with other content: a tx's result, or one event less. The hash commits to
        // the block, so this is that block: the stored one stays, and the node gets its 200 (a refusal would
        // stall it: it re-sends until it gets one).
        for (const edit of [
          (p: Payload) => (p.transactions[1].raw_result = '0x0704'), // (ok false), not (ok true)
          (p: Payload) => p.events.pop(),
          (p: Payload) => (p.burn_block_time = Number(p.burn_block_time) + 1),
        ]) {
          const res = await post(ctx.app, '/new_block', edited(next, edit, { keepHash: true }));
          assert.equal(res.statusCode, 200, res.body);
          assert.deepEqual(res.json(), { result: 'ok', outcome: 'reannounced' });
          assert.deepEqual(await databaseDigest(ctx.store.sql, INDEX_TABLES), applied);
        }
      } finally {
        await ctx.app.close();
        await ctx.store.close();
      }
    });
  });
}
