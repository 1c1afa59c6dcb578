import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { connect, type AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { Ingestor } from '../../src/ingest/ingestor.js';
import { buildObserverServer } from '../../src/ingest/observer-server.js';
import { MESSAGE_PIECE_CHARS } from '../../src/store/message-text.js';
import { readLoggedMessages } from '../../src/store/read/message-log.js';
import type { Store } from '../../src/store/store.js';
import {
  TestChain,
  addressOf,
  transferTx,
  transferWithEvent,
  type ObserverMessage,
} from '../support/chain.js';
import { capturingLogger, openTestStore, stopOwnCluster, type LogLine } from '../support/database.js';
import type { Engine } from '../../src/store/db.js';
import { testEngines } from '../support/engines.js';
import { readMessages } from '../support/delivery.js';
import { INDEX_TABLES, READ_TABLES, databaseDigest } from '../support/digest.js';
import { fixtureFile } from '../support/shared.js';
import { Random } from '../../src/devnet/random.js';

// Hostile input on the event-observer port: whatever arrives, the answer is a 4xx with the JSON error body
// (or a 200 with a logged skip where stacks-node semantics need one), the process stays up, and a rejected
// message leaves no trace: not a row of it, not in the raw log either.

after(stopOwnCluster);

const MB = 1024 * 1024;

interface Fixture {
  store: Store;
  app: FastifyInstance;
  lines: LogLine[];
}

async function openObserver(engine: Engine, bodyLimitBytes = 500 * MB): Promise<Fixture> {
  const store = await openTestStore(engine);
  const { logger, lines } = capturingLogger();
  const ingestor = new Ingestor(store, { isMainnet: false, logger });
  const app = buildObserverServer({ ingestor, logger, bodyLimitBytes });
  return { store, app, lines };
}

async function post(app: FastifyInstance, url: string, payload: string) {
  return app.inject({ method: 'POST', url, payload, headers: { 'content-type': 'application/json' } });
}

/** A base chain of 3 blocks of signed transfers, and the next block to mutate: built, none sent. */
async function chainWithNextBlock() {
  const chain = new TestChain();
  const base: BuiltBlock[] = [];
  let nonce = 0;
  const transfers = async (n: number) => {
    const txs = [];
    for (let i = 0; i < n; i++) {
      txs.push(
        await transferWithEvent({
          from: 'alice',
          to: addressOf('bob'),
          amount: 100 + i,
          fee: 180,
          nonce: nonce++,
        }),
      );
    }
    return txs;
  };
  for (let h = 1; h <= 3; h++) base.push(chain.buildBlock({ txs: await transfers(2) }).message);
  const next = chain.buildBlock({ txs: await transfers(3) }).message;
  return { chain, base, next };
}

type Json = Record<string, unknown>;
type BuiltBlock = ObserverMessage<Json>;
const clone = (v: unknown) => structuredClone(v) as Json;

/** The block with `edit` applied to a deep copy of its payload. */
function mutated(
  block: BuiltBlock,
  edit: (p: Json & { transactions: Json[]; events: Json[] }) => void,
): string {
  const payload = clone(block.payload) as Json & { transactions: Json[]; events: Json[] };
  edit(payload);
  // Each variant is a block of its own: should one be (wrongly) accepted, the next is not taken for it.
  if (payload.index_block_hash === block.payload.index_block_hash) {
    payload.index_block_hash = '0x' + createHash('sha256').update(JSON.stringify(payload)).digest('hex');
  }
  return JSON.stringify(payload);
}

function nested(depth: number, leaf = '0'): string {
  return '['.repeat(depth) + leaf + ']'.repeat(depth);
}

const NESTED = '"__nested__"';

/** Like `mutated`, with the value set to NESTED replaced by JSON nested `depth` deep (too deep to stringify). */
function mutatedNested(
  block: BuiltBlock,
  depth: number,
  edit: (p: Json & { transactions: Json[]; events: Json[] }, value: string) => void,
): string {
  return mutated(block, (p) => edit(p, JSON.parse(NESTED) as string)).replace(NESTED, nested(depth));
}

interface HostileCase {
  name: string;
  path: string;
  body: string;
  /** expected status (400 unless said) */
  status?: number;
  message?: RegExp;
}

function hostileCases(next: BuiltBlock, random: Random): HostileCase[] {
  const body = next.body;
  const cases: HostileCase[] = [];

  // Truncated JSON at random points, and other non-JSON bodies.
  for (let i = 0; i < 25; i++) {
    const at = random.int(0, body.length - 1);
    cases.push({
      name: `truncated at ${at}`,
      path: '/new_block',
      body: body.slice(0, at),
      message: /not valid JSON/,
    });
  }
  for (const [name, text] of [
    ['empty body', ''],
    ['whitespace', '  \n '],
    ['null', 'null'],
    ['a string', '"block"'],
    ['a number', '42'],
    ['an array', '[]'],
    ['trailing garbage', body + 'x'],
    ['raw NUL byte', body.slice(0, 20) + '\u0000' + body.slice(20)],
    ['invalid UTF-16 escape', '{"block_hash": "\\ud800"}'],
    ['single quotes', "{'block_hash': '0x00'}"],
  ] as const) {
    cases.push({ name, path: '/new_block', body: text });
  }

  // Wrong types and out-of-range values in the block.
  const blockEdits: [string, (p: Json & { transactions: Json[]; events: Json[] }) => void][] = [
    ['block_height as a string', (p) => (p.block_height = String(p.block_height))],
    ['negative block_height', (p) => (p.block_height = -1)],
    ['fractional block_height', (p) => (p.block_height = 4.5)],
    ['block_height past int4', (p) => (p.block_height = 2 ** 31)],
    ['block_height 1e300', (p) => (p.block_height = 1e300)],
    ['burn_block_time past int8', (p) => (p.burn_block_time = 2 ** 64)],
    ['index_block_hash a number', (p) => (p.index_block_hash = 123)],
    ['index_block_hash not hex', (p) => (p.index_block_hash = '0xzz')],
    ['index_block_hash without 0x', (p) => (p.index_block_hash = String(p.index_block_hash).slice(2))],
    ['transactions an object', (p) => ((p as Json).transactions = {})],
    ['transactions [null]', (p) => ((p as Json).transactions = [null])],
    ['events a string', (p) => ((p as Json).events = 'x')],
    ['missing parent_index_block_hash', (p) => delete p.parent_index_block_hash],
    ['raw_tx a number', (p) => (p.transactions[0].raw_tx = 42)],
    ['raw_tx not a transaction', (p) => (p.transactions[0].raw_tx = '0xdeadbeef')],
    ['raw_tx truncated', (p) => (p.transactions[0].raw_tx = String(p.transactions[0].raw_tx).slice(0, 60))],
    ['unknown tx status', (p) => (p.transactions[0].status = 'exploded')],
    ['negative tx_index', (p) => (p.transactions[0].tx_index = -1)],
    ['tx_index past int4', (p) => (p.transactions[0].tx_index = 2 ** 31)],
    ['raw_result not Clarity', (p) => (p.transactions[0].raw_result = '0xff')],
    ['execution cost a string', (p) => ((p.transactions[0].execution_cost as Json).runtime = 'x')],
    ['execution cost past int8', (p) => ((p.transactions[0].execution_cost as Json).runtime = 1e30)],
    ['two txs with one txid', (p) => (p.transactions[1] = { ...p.transactions[0], tx_index: 1 })],
    ['event without its body', (p) => delete p.events[0].stx_transfer_event],
    ['event body a string', (p) => (p.events[0].stx_transfer_event = 'x')],
    ['event amount not a number', (p) => ((p.events[0].stx_transfer_event as Json).amount = 'abc')],
    ['event amount an object', (p) => ((p.events[0].stx_transfer_event as Json).amount = { n: 1 })],
    ['event amount negative', (p) => ((p.events[0].stx_transfer_event as Json).amount = '-5')],
    [
      'event amount past u128',
      (p) => ((p.events[0].stx_transfer_event as Json).amount = '9'.repeat(200_000)),
    ],
    ['event sender a number', (p) => ((p.events[0].stx_transfer_event as Json).sender = 7)],

    ['event sender of 10 KB', (p) => ((p.events[0].stx_transfer_event as Json).sender = 'S'.repeat(10_000))],
    ['event txid not hex', (p) => (p.events[0].txid = 'nope')],
    ['event_index negative', (p) => (p.events[0].event_index = -3)],
    [
      'lock event unlock_height not a number',
      (p) =>
        p.events.push({
          txid: p.transactions[0].txid,
          event_index: 9,
          committed: true,
          type: 'stx_lock_event',
          stx_lock_event: { locked_amount: '10', unlock_height: 'soon', locked_address: addressOf('alice') },
        }),
    ],
    [
      'nft value not Clarity',
      (p) =>
        p.events.push({
          txid: p.transactions[0].txid,
          event_index: 9,
          committed: true,
          type: 'nft_mint_event',
          nft_mint_event: { asset_identifier: 'ST1.x::y', recipient: addressOf('alice'), raw_value: '0xzz' },
        }),
    ],

    [
      'miner reward amount not a number',
      (p) =>
        (p.matured_miner_rewards = [
          {
            recipient: addressOf('alice'),
            coinbase_amount: 'lots',
            tx_fees_anchored: '0',
            tx_fees_streamed_confirmed: '0',
            tx_fees_streamed_produced: '0',
            from_index_consensus_hash: '0x00',
            from_stacks_block_hash: '0x00',
          },
        ]),
    ],
  ];
  for (const [name, edit] of blockEdits) cases.push({ name, path: '/new_block', body: mutated(next, edit) });

  // The other message kinds.
  cases.push(
    {
      name: 'burn block height a string',
      path: '/new_burn_block',
      body: '{"burn_block_hash":"0x01","burn_block_height":"x"}',
    },
    {
      name: 'burn block amount past u128',
      path: '/new_burn_block',
      body: `{"burn_block_hash":"0x01","burn_block_height":5,"burn_amount":"${'9'.repeat(100)}"}`,
    },
    {
      name: 'burn block height past int4',
      path: '/new_burn_block',
      body: '{"burn_block_hash":"0x01","burn_block_height":4294967296}',
    },
    {
      name: 'burn block reward recipients nested deep',
      path: '/new_burn_block',
      body: `{"burn_block_hash":"0x${'01'.repeat(32)}","burn_block_height":5,"reward_recipients":${nested(100_000, '{}')}}`,
    },
    { name: 'mempool: not hex', path: '/new_mempool_tx', body: '["0xzz"]' },
    { name: 'mempool: half a byte', path: '/new_mempool_tx', body: '["0x000"]' },
    { name: 'drop: reason a number', path: '/drop_mempool_tx', body: '{"dropped_txids": [], "reason": 5}' },
    { name: 'mempool: an object', path: '/new_mempool_tx', body: '{"txs": []}' },
    { name: 'mempool: numbers', path: '/new_mempool_tx', body: '[1, 2]' },
    {
      name: 'drop: ids not an array',
      path: '/drop_mempool_tx',
      body: '{"dropped_txids": "0x01", "reason": "TooExpensive"}',
    },
    { name: 'microblocks: an array', path: '/new_microblocks', body: '[]' },
    {
      name: 'microblocks: missing fields',
      path: '/new_microblocks',
      body: '{"parent_index_block_hash": "0x01"}',
    },
    { name: 'unknown path', path: '/new_thing', body: '{}', status: 404 },
    { name: 'unknown nested path', path: '/new_block/extra', body: body, status: 404 },
  );

  // A block whose parent this index has never seen: messages before it are missing.
  const orphan = clone(next.payload);
  orphan.parent_index_block_hash = '0x' + 'ee'.repeat(32);
  orphan.parent_block_hash = '0x' + 'ef'.repeat(32);
  cases.push({
    name: 'block with an unknown parent',
    path: '/new_block',
    body: JSON.stringify(orphan),
    status: 409,
    message: /parent .* is not indexed/,
  });
  const far = clone(next.payload);
  far.block_height = 1_000_000;
  far.parent_index_block_hash = '0x' + 'ee'.repeat(32);
  cases.push({
    name: 'far-away block with an unknown parent',
    path: '/new_block',
    body: JSON.stringify(far),
    status: 409,
  });

  // Deep nesting where the payload is read.
  cases.push(
    { name: 'deeply nested body', path: '/new_block', body: nested(200_000) },
    {
      name: 'deeply nested event body',
      path: '/new_block',
      body: mutatedNested(next, 100_000, (p, v) => ((p.events[0].stx_transfer_event as Json).amount = v)),
    },
    {
      name: 'deeply nested tx field',
      path: '/new_block',
      body: mutatedNested(next, 100_000, (p, v) => (p.transactions[0].vm_error = v)),
    },
  );
  return cases;
}

for (const engine of testEngines(import.meta.url)) {
  describe(`hostile event-observer messages (${engine})`, () => {
    test('malformed, mistyped and misplaced messages: 4xx with a JSON error, nothing written', async () => {
      const { store, app, lines } = await openObserver(engine);
      try {
        const { base, next } = await chainWithNextBlock();
        for (const b of base) assert.equal((await post(app, '/new_block', b.body)).statusCode, 200);
        const cases = hostileCases(next, new Random('observer-hostile'));
        const failures: string[] = [];
        for (const c of cases) {
          const before = await databaseDigest(store.sql, INDEX_TABLES);
          const res = await post(app, c.path, c.body);
          const expected = c.status ?? 400;
          let json: { statusCode?: unknown; error?: unknown; message?: unknown } = {};
          try {
            json = res.json();
          } catch {
            // reported below
          }
          if (
            res.statusCode !== expected ||
            json.statusCode !== expected ||
            typeof json.error !== 'string' ||
            typeof json.message !== 'string' ||
            (c.message && !c.message.test(json.message))
          ) {
            failures.push(`${c.name}: ${res.statusCode} ${res.body.slice(0, 300)}`);
          }
          const after = await databaseDigest(store.sql, INDEX_TABLES);
          if (JSON.stringify(after) !== JSON.stringify(before))
            failures.push(`${c.name}: the database changed`);
        }
        assert.deepEqual(failures, [], `${failures.length} of ${cases.length} hostile messages mishandled`);
        assert.ok(cases.length >= 90, `${cases.length} cases`);
        console.log(
          `observer hostile (${engine}): ${cases.length} messages, each a 4xx, none wrote anything`,
        );
        // Rejections are logged as warnings naming the path; nothing was logged as a server error.
        assert.ok(lines.some((l) => l.msg === 'rejected observer message'));
        assert.equal(
          lines.filter((l) => l.level >= 50).length,
          0,
          JSON.stringify(lines.filter((l) => l.level >= 50)),
        );

        // The observer is still in service: the genuine block goes in.
        const ok = await post(app, '/new_block', next.body);
        assert.equal(ok.statusCode, 200);
        assert.equal(ok.json().outcome, 'applied');
        const [tip] = await store.sql<{ block_height: number }[]>`SELECT block_height FROM chain_tip`;
        assert.equal(tip.block_height, 4);
      } finally {
        await app.close();
        await store.close();
      }
    });

    test('a contract ABI nested too deep or not JSON: 400; deep nesting in a message only logged: 200', async () => {
      const { store, app } = await openObserver(engine);
      try {
        const [{ payload }] = await readMessages(fixtureFile('mocknet'));
        const block = JSON.parse(payload) as { transactions: { contract_abi: unknown }[] };
        const deploy = block.transactions.findIndex((t) => t.contract_abi);
        block.transactions[deploy].contract_abi = JSON.parse(NESTED);
        const deep = JSON.stringify(block).replace(NESTED, nested(100_000, '{}'));
        block.transactions[deploy].contract_abi = '{"functions": [';
        const broken = JSON.stringify(block);
        const empty = await databaseDigest(store.sql, INDEX_TABLES);
        for (const bad of [deep, broken]) {
          const res = await post(app, '/new_block', bad);
          assert.equal(res.statusCode, 400, res.body);
          assert.match(res.json().message, /contract ABI of 0x[0-9a-f]{64} (nests deeper|is not JSON)/);
          assert.deepEqual(await databaseDigest(store.sql, INDEX_TABLES), empty);
        }
        // The genuine block goes in.
        assert.equal((await post(app, '/new_block', payload)).statusCode, 200);

        // Attachments are only kept in the raw log: the text is stored as received, in pieces of bounded
        // size (2,000,001 characters: 8 pieces), and reads back whole.
        const text = nested(1_000_000);
        const attachment = await post(app, '/attachments/new', text);
        assert.equal(attachment.statusCode, 200, attachment.body);
        const [row] = await store.sql<{ id: string; first: number; later: number[] }[]>`
          SELECT m.id, length(m.payload) AS first,
            array(SELECT length(piece) FROM observer_message_pieces p WHERE p.message_id = m.id
                  ORDER BY piece_number) AS later
          FROM observer_messages m WHERE m.path = '/attachments/new'`;
        assert.equal(row.first, MESSAGE_PIECE_CHARS);
        assert.deepEqual(row.later, [
          ...Array(6).fill(MESSAGE_PIECE_CHARS),
          2_000_001 - 7 * MESSAGE_PIECE_CHARS,
        ]);
        const logged = await readLoggedMessages(store.sql, Number(row.id) - 1, 1);
        assert.equal(logged[0].path, '/attachments/new');
        assert.equal(logged[0].payload.length, 2_000_001);
        assert.ok(logged[0].payload === text, 'the text read back is the text received');
      } finally {
        await app.close();
        await store.close();
      }
    });

    test('unknown event types and off-tip microblocks: 200, skipped and logged', async () => {
      const { store, app, lines } = await openObserver(engine);
      try {
        const { chain, base, next } = await chainWithNextBlock();
        for (const b of base) assert.equal((await post(app, '/new_block', b.body)).statusCode, 200);

        // Microblocks built on a block that is not the tip: answered 200 (the node moves on), index unchanged.
        const readBefore = await databaseDigest(store.sql, READ_TABLES);
        const tx = await transferTx({ from: 'carol', to: addressOf('dave'), amount: 5, fee: 180, nonce: 0 });
        const offTip = chain.buildMicroblock({ parent: chain.blocks[0], txs: [{ tx }] }).message;
        const res = await post(app, '/new_microblocks', offTip.body);
        assert.equal(res.statusCode, 200);
        assert.equal(res.json().outcome, 'skipped');
        assert.deepEqual(await databaseDigest(store.sql, READ_TABLES), readBefore);
        assert.ok(lines.some((l) => l.msg === 'microblocks not built on the chain tip: ignored'));

        // Event types a newer node may send are left out of the index with a warning, not refused. NUL in a
        // text value is dropped, as the original API does; quotes and backslashes are kept as sent.
        const body = mutated(next, (p) => {
          p.transactions[1].vm_error = 'boom\u0000! "quoted" \\ back\\slash';
          p.events.push(
            {
              txid: p.transactions[0].txid,
              event_index: 7,
              committed: true,
              type: 'signer_event',
              signer_event: {},
            },
            {
              txid: p.transactions[0].txid,
              event_index: 8,
              committed: true,
              type: 'stx_teleport_event',
              stx_teleport_event: { amount: '1' },
            },
          );
        });
        const applied = await post(app, '/new_block', body);
        assert.equal(applied.statusCode, 200, applied.body);
        assert.equal(applied.json().outcome, 'applied');
        const [events] = await store.sql<{ n: number }[]>`
          SELECT count(*)::int AS n FROM events
          WHERE index_block_hash = ${(JSON.parse(body) as { index_block_hash: string }).index_block_hash}`;
        assert.equal(events.n, 3);
        const [failed] = await store.sql<{ vm_error: string }[]>`
          SELECT vm_error FROM txs WHERE tx_id = ${(JSON.parse(body) as { transactions: { txid: string }[] }).transactions[1].txid}`;
        assert.equal(failed.vm_error, 'boom! "quoted" \\ back\\slash');
        const skips = lines.filter((l) => l.msg === 'event type not indexed: skipped');
        assert.deepEqual(skips.map((l) => l.type).sort(), ['signer_event', 'stx_teleport_event']);
      } finally {
        await app.close();
        await store.close();
      }
    });
  });
}

describe('hostile event-observer bodies over a socket (postgres)', () => {
  let fixture: Fixture;
  let deployBlock: string;
  before(async () => {
    [{ payload: deployBlock }] = await readMessages(fixtureFile('mocknet'));
  });

  /**
   * One POST over a raw socket: the headers declare `declared` bytes (or chunked), then `sent` bytes of body
   * (`head`, then filler) go out, and the answer is read once the server closes. A body the server must refuse is
   * sent only up to where it refuses (nothing, when it can refuse on the headers; just past the limit, when it
   * counts chunked bytes): had the client kept writing, the server would close with unread bytes, the kernel
   * would reset the connection, and the reset can discard the answer before it is read (seen as `write EPIPE`
   * under load). A server that waits for the rest instead of answering fails after a minute.
   */
  function postLarge(port: number, path: string, head: string, body: { declared?: number; sent: number }) {
    return new Promise<{ status: number; body: string }>((resolve, reject) => {
      const chunked = body.declared === undefined;
      const socket = connect(port, '127.0.0.1');
      const received: Buffer[] = [];
      socket.on('data', (d: Buffer) => received.push(d));
      // A write error may be reported before an answer already received is read: judged once closed.
      let failure: Error | undefined;
      socket.on('error', (err) => (failure ??= err));
      const waited = setTimeout(() => socket.destroy(new Error('no answer within a minute')), 60_000);
      socket.on('close', () => {
        clearTimeout(waited);
        if (received.length === 0 && failure) return reject(failure);
        const text = Buffer.concat(received).toString('utf8');
        const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1] ?? 0);
        const headerEnd = text.indexOf('\r\n\r\n');
        let answer = headerEnd >= 0 ? text.slice(headerEnd + 4) : '';
        if (/\r\ntransfer-encoding: chunked/i.test(text.slice(0, headerEnd))) {
          answer = answer.replace(/^[0-9a-f]+\r\n/, '').replace(/\r\n0\r\n\r\n$/, '');
        }
        resolve({ status, body: answer });
      });
      const frame = (piece: Buffer) =>
        chunked
          ? Buffer.concat([Buffer.from(`${piece.length.toString(16)}\r\n`), piece, Buffer.from('\r\n')])
          : piece;
      socket.write(
        `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nConnection: close\r\n` +
          (chunked ? 'Transfer-Encoding: chunked\r\n\r\n' : `Content-Length: ${body.declared}\r\n\r\n`),
      );
      const filler = Buffer.alloc(MB, 'a');
      let sent = 0;
      const pump = () => {
        while (sent < body.sent && !socket.destroyed) {
          const piece = sent === 0 ? Buffer.from(head) : filler.subarray(0, Math.min(MB, body.sent - sent));
          sent += piece.length;
          if (!socket.write(frame(piece))) return void socket.once('drain', pump);
        }
      };
      pump();
    });
  }

  test('100 MB under the limit but malformed: 400; over a lowered limit: 413; the process stays up', async () => {
    fixture = await openObserver('postgres');
    const small = await openObserver('postgres', 8 * MB);
    try {
      await fixture.app.listen({ host: '127.0.0.1', port: 0 });
      await small.app.listen({ host: '127.0.0.1', port: 0 });
      const port = (fixture.app.server.address() as AddressInfo).port;
      const smallPort = (small.app.server.address() as AddressInfo).port;
      const before = await databaseDigest(fixture.store.sql, INDEX_TABLES);

      const malformed = await postLarge(port, '/new_block', '{"block_hash": "0x', {
        declared: 100 * MB,
        sent: 100 * MB,
      });
      assert.equal(malformed.status, 400, malformed.body);
      assert.match(JSON.parse(malformed.body).message, /not valid JSON/);

      const tooLarge = await postLarge(smallPort, '/new_block', '{"block_hash": "0x', {
        declared: 100 * MB,
        sent: 0,
      });
      assert.equal(tooLarge.status, 413, tooLarge.body);
      assert.deepEqual(Object.keys(JSON.parse(tooLarge.body)).sort(), ['error', 'message', 'statusCode']);
      const chunked = await postLarge(smallPort, '/new_block', '{"block_hash": "0x', { sent: 9 * MB });
      assert.equal(chunked.status, 413, chunked.body);

      assert.deepEqual(await databaseDigest(fixture.store.sql, INDEX_TABLES), before);
      // Still serving, and a genuine 290 KB block (boot contracts) goes in on both.
      for (const p of [port, smallPort]) {
        const res = await fetch(`http://127.0.0.1:${p}/new_block`, { method: 'POST', body: deployBlock });
        assert.equal(res.status, 200, await res.text());
      }
    } finally {
      await fixture.app.close();
      await fixture.store.close();
      await small.app.close();
      await small.store.close();
    }
  });
});
