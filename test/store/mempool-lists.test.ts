import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import {
  listMempoolTxs,
  type MempoolFilter,
  type MempoolOrder,
  type MempoolOrderBy,
} from '../../src/store/read/mempool-lists.js';
import { MempoolStatus } from '../../src/store/schema/codes.js';
import type { Store } from '../../src/store/store.js';
import { openTestStore, stopOwnCluster } from '../support/database.js';
import { Ingestor } from '../../src/ingest/ingestor.js';
import { silentLogger } from '../support/database.js';
import { fixtureIsMainnet, fixtureMessages } from '../support/shared.js';

// The mempool lists (docs/upstream.md C.7, C.8) are not in the goldens: their order follows receipt times an
// import takes from the clock. So they are checked against the documented rules, applied here to the stored
// rows themselves: the pending txs, and for an anchored read the unconfirmed microblock stream's txs shown as
// pending; by receipt time (newest first by default), fee or size, either way, ties by id; filtered by
// sender, token-transfer recipient, both, or a principal in any role but sponsor; `total` the pending count
// without a filter, the rows listed with one. The generated chain ends with a live mempool (the recorded
// chains that end with an unconfirmed stream hold no mempool row of its txs).

after(stopOwnCluster);

interface Row {
  tx_id: string;
  pruned: boolean;
  receipt_time: number;
  fee_rate: string;
  tx_size: number;
  sender_address: string;
  sponsor_address: string | null;
  token_transfer_recipient: string | null;
  contract_call_contract_id: string | null;
  smart_contract_contract_id: string | null;
  /** whether the tx sits in the unconfirmed microblock stream (canonical) */
  streamed: boolean;
}

const CHAINS = ['generated/gen-small'];
let store: Store;
let rows: Row[];
/** What each chain gave to check, for the last test. */
const coverage: Record<string, { pending: number; streamed: number; senders: number }> = {};

async function load(chain: string) {
  await store?.close();
  store = await openTestStore('postgres');
  const ingestor = new Ingestor(store, { isMainnet: fixtureIsMainnet(chain), logger: silentLogger });
  for (const m of fixtureMessages(chain)) await ingestor.take(m.path, m.payload, m.receivedAt);
  rows = await store.sql<Row[]>`
    SELECT m.tx_id, m.pruned, m.receipt_time::float8 AS receipt_time, m.fee_rate::text, m.tx_size,
      m.sender_address, m.sponsor_address, m.token_transfer_recipient, m.contract_call_contract_id,
      m.smart_contract_contract_id,
      EXISTS (SELECT FROM txs t WHERE t.tx_id = m.tx_id AND t.index_block_hash = '' AND t.canonical
        AND t.microblock_canonical) AS streamed
    FROM mempool_txs m`;
  const pending = rows.filter((r) => !r.pruned);
  coverage[chain] = {
    pending: pending.length,
    streamed: rows.filter((r) => r.pruned && r.streamed).length,
    senders: new Set(pending.map((r) => r.sender_address)).size,
  };
}

after(() => store?.close());

const KEYS: Record<MempoolOrderBy, (r: Row) => number> = {
  age: (r) => r.receipt_time,
  fee: (r) => Number(r.fee_rate),
  size: (r) => r.tx_size,
};

function matches(row: Row, filter: MempoolFilter): boolean {
  switch (filter.kind) {
    case 'all':
      return true;
    case 'sender':
      return row.sender_address === filter.sender;
    case 'recipient':
      return row.token_transfer_recipient === filter.recipient;
    case 'sender-and-recipient':
      return row.sender_address === filter.sender && row.token_transfer_recipient === filter.recipient;
    case 'address':
      return [
        row.sender_address,
        row.token_transfer_recipient,
        row.contract_call_contract_id,
        row.smart_contract_contract_id,
      ].includes(filter.address);
  }
}

/** The documented list, from the stored rows. */
function expected(filter: MempoolFilter, orderBy: MempoolOrderBy, order: MempoolOrder, unanchored: boolean) {
  const listed = rows.filter((r) => (!r.pruned || (!unanchored && r.streamed)) && matches(r, filter));
  const sign = order === 'asc' ? 1 : -1;
  listed.sort(
    (a, b) =>
      sign * (KEYS[orderBy](a) - KEYS[orderBy](b)) ||
      sign * (a.tx_id < b.tx_id ? -1 : a.tx_id > b.tx_id ? 1 : 0),
  );
  const pending = rows.filter((r) => !r.pruned).length;
  return { ids: listed.map((r) => r.tx_id), total: filter.kind === 'all' ? pending : listed.length };
}

async function page(
  filter: MempoolFilter,
  orderBy: MempoolOrderBy,
  order: MempoolOrder,
  unanchored: boolean,
  limit: number,
  offset: number,
) {
  return listMempoolTxs(store.sql, { filter, orderBy, order, unanchored, limit, offset });
}

for (const chain of CHAINS) {
  describe(`the mempool lists (postgres): ${chain}`, () => {
    before(() => load(chain));

    for (const orderBy of ['age', 'fee', 'size'] as const) {
      for (const order of ['desc', 'asc'] as const) {
        test(`all pending txs by ${orderBy} ${order}, page by page`, async () => {
          for (const unanchored of [false, true]) {
            const want = expected({ kind: 'all' }, orderBy, order, unanchored);
            const ids: string[] = [];
            for (let offset = 0; offset <= want.ids.length; offset += 7) {
              const got = await page({ kind: 'all' }, orderBy, order, unanchored, 7, offset);
              assert.equal(got.total, want.total, `total at ${offset}`);
              for (const tx of got.txs) assert.equal(tx.status, MempoolStatus.pending);
              ids.push(...got.txs.map((t) => t.tx_id));
            }
            assert.deepEqual(ids, want.ids, `unanchored ${unanchored}`);
          }
        });
      }
    }

    test("each principal's list: as sender, recipient, both, or in any role but sponsor", async () => {
      const principals = new Set(
        rows.flatMap((r) => [
          r.sender_address,
          r.token_transfer_recipient,
          r.contract_call_contract_id,
          r.sponsor_address,
        ]),
      );
      let listed = 0;
      for (const principal of principals) {
        if (principal === null) continue;
        const recipient = rows.find((r) => r.sender_address === principal)?.token_transfer_recipient;
        const filters: MempoolFilter[] = [
          { kind: 'address', address: principal },
          { kind: 'sender', sender: principal },
          { kind: 'recipient', recipient: principal },
        ];
        if (recipient) filters.push({ kind: 'sender-and-recipient', sender: principal, recipient });
        for (const filter of filters) {
          const want = expected(filter, 'age', 'desc', false);
          const got = await page(filter, 'age', 'desc', false, 50, 0);
          assert.deepEqual(
            got.txs.map((t) => t.tx_id),
            want.ids.slice(0, 50),
            JSON.stringify(filter),
          );
          assert.equal(got.total, got.txs.length > 0 ? want.total : 0, JSON.stringify(filter));
          listed += got.txs.length;
        }
      }
      assert.ok(listed > 0);
      // a sponsor alone is not listed: the chain's sponsors that send nothing pending
      const sponsorsOnly = [...principals].filter(
        (p) =>
          p !== null &&
          rows.some((r) => r.sponsor_address === p && !r.pruned) &&
          !rows.some((r) => matches(r, { kind: 'address', address: p })),
      );
      for (const sponsor of sponsorsOnly) {
        const got = await page({ kind: 'address', address: sponsor! }, 'age', 'desc', false, 50, 0);
        assert.deepEqual(got, { total: 0, txs: [] });
      }
    });

    test('a page past the end keeps the pending count without a filter, 0 with one', async () => {
      const all = expected({ kind: 'all' }, 'age', 'desc', false);
      assert.deepEqual(await page({ kind: 'all' }, 'age', 'desc', false, 20, all.ids.length + 5), {
        total: all.total,
        txs: [],
      });
      const sender = rows.find((r) => !r.pruned)!.sender_address;
      assert.deepEqual(await page({ kind: 'sender', sender }, 'age', 'desc', false, 20, 10_000), {
        total: 0,
        txs: [],
      });
    });
  });
}

test('the chains leave pending txs over pages, from several senders', (t) => {
  t.diagnostic(JSON.stringify(coverage));
  const all = Object.values(coverage);
  assert.ok(all.some((c) => c.pending > 14 && c.senders > 1 && c.senders < c.pending));
});
