import assert from 'node:assert/strict';
import util from 'node:util';
import { after, describe, test } from 'node:test';
import type { Sql } from '../../src/store/db.js';
import { EventKind } from '../../src/store/schema/codes.js';
import { listAddressTransactions, listAddressTxEvents } from '../../src/store/read/address-history.js';
import {
  findBurnBlock,
  listBlocks,
  listBlockTxs,
  listBurnBlockBlocks,
  listBurnBlocks,
  type BurnBlockLocator,
  type BurnBlockRecord,
} from '../../src/store/read/block-lists.js';
import type { BlockLocator } from '../../src/store/read/blocks.js';
import { findContractSource } from '../../src/store/read/contract-source.js';
import { listFtBalances } from '../../src/store/read/ft-balances.js';
import { listNftHoldings, type NftHolding } from '../../src/store/read/nft-holdings.js';
import { getNonces } from '../../src/store/read/nonces.js';
import { listRecentTxs } from '../../src/store/read/recent-txs.js';
import { searchAddress, searchContract, searchHash } from '../../src/store/read/search.js';
import type { Store } from '../../src/store/store.js';
import { Ingestor } from '../../src/ingest/ingestor.js';
import { openTestStore, silentLogger, stopOwnCluster } from '../support/database.js';
import {
  beyondGoldenNames,
  fixtureIsMainnet,
  fixtureMessages,
  loadGolden,
  type GoldenRecord,
} from '../support/shared.js';

// The store's reads of the routes beyond the contract's ten, against the original API's answers on the
// recorded and generated chains (golden/README.md "Beyond the ten"): for every answer of a route these reads
// serve, the rows the read returns give the answer's ids, order, totals and cursors. What the answer modules
// add (shapes, formatting, status codes) is theirs to test; here a 404 is an empty read.

after(stopOwnCluster);

/** A golden's answer and what the read gave, as the fields compared. */
type Check = (
  sql: Sql,
  url: URL,
  record: GoldenRecord & { body: Body },
) => Promise<{ want: unknown; got: unknown }>;

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Body = any;

const intParam = (url: URL, name: string, fallback: number) => {
  const value = url.searchParams.get(name);
  return value === null ? fallback : Number(value);
};

/** A path's block: `latest`, a height, or a hash (64 hex digits, `0x` optional). */
function blockLocator(segment: string): BlockLocator & BurnBlockLocator {
  if (segment === 'latest') return { latest: true };
  if (/^\d+$/.test(segment)) return { height: Number(segment) };
  return { hash: `0x${segment.replace(/^0x/, '').toLowerCase()}` };
}

/**
 * Tx ids in list order, the ids of each run of txs that share the sort key sorted (the original's order of
 * such ties is not defined: docs/upstream.md C.0).
 */
function inChainOrder(
  txs: { tx_id: string; block_height: number; microblock_sequence?: number; tx_index: number }[],
): string[][] {
  const runs: string[][] = [];
  let last = '';
  for (const tx of txs) {
    const key = `${tx.block_height}:${tx.microblock_sequence ?? ''}:${tx.tx_index}`;
    if (key !== last || runs.length === 0) runs.push([]);
    runs[runs.length - 1].push(tx.tx_id);
    last = key;
  }
  return runs.map((run) => run.sort());
}

/** A golden v2 block list's items as compared. */
const goldenBlocks = (body: Body) =>
  (body.results as Body[]).map((b) => ({ height: b.height, index_block_hash: b.index_block_hash }));

const burnBlockOf = (b: BurnBlockRecord) => ({
  burn_block_height: b.burn_block_height,
  burn_block_hash: b.burn_block_hash,
  burn_block_time: b.burn_block_time,
  stacks_blocks: b.stacks_blocks,
  avg_block_time: b.avg_block_time === null ? 0 : Math.round(b.avg_block_time * 100) / 100,
  total_tx_count: b.total_tx_count,
});
const goldenBurnBlockOf = (b: Body) => ({
  burn_block_height: b.burn_block_height,
  burn_block_hash: b.burn_block_hash,
  burn_block_time: b.burn_block_time,
  stacks_blocks: b.stacks_blocks,
  avg_block_time: b.avg_block_time,
  total_tx_count: b.total_tx_count,
});

const EVENT_TYPES: Record<number, string> = {
  [EventKind.stxAsset]: 'stx',
  [EventKind.ftAsset]: 'ft',
  [EventKind.nftAsset]: 'nft',
};

/** The routes served, by path pattern, and how each answer is checked. */
const ROUTES: [RegExp, string, Check][] = [
  [
    /^\/extended\/v2\/blocks$/,
    'blocks',
    async (sql, url, { body }) => {
      const page = await listBlocks(sql, {
        limit: intParam(url, 'limit', 20),
        offset: intParam(url, 'offset', 0),
        cursor: url.searchParams.get('cursor'),
      });
      return {
        want: [body.total, body.cursor, body.next_cursor, body.prev_cursor, goldenBlocks(body)],
        got: [
          page.total,
          page.blocks[0]?.index_block_hash ?? null,
          page.nextCursor,
          page.prevCursor,
          page.blocks.map((b) => ({ height: b.block_height, index_block_hash: b.index_block_hash })),
        ],
      };
    },
  ],
  [
    /^\/extended\/v2\/blocks\/([^/]+)\/transactions$/,
    'block txs',
    async (sql, url, { status, body }) => {
      const at = blockLocator(decodeURIComponent(url.pathname.split('/')[4]));
      const page = await listBlockTxs(sql, at, {
        limit: intParam(url, 'limit', 20),
        offset: intParam(url, 'offset', 0),
      });
      // an empty page is the original's 404
      if (status === 404) return { want: [], got: page.txs.map((t) => t.tx_id) };
      return {
        want: [body.total, inChainOrder(body.results)],
        got: [page.total, inChainOrder(page.txs)],
      };
    },
  ],
  [
    /^\/extended\/v2\/burn-blocks$/,
    'burn blocks',
    async (sql, url, { body }) => {
      const page = await listBurnBlocks(sql, {
        limit: intParam(url, 'limit', 20),
        offset: intParam(url, 'offset', 0),
      });
      return {
        want: [body.total, (body.results as Body[]).map(goldenBurnBlockOf)],
        got: [page.total, page.burnBlocks.map(burnBlockOf)],
      };
    },
  ],
  [
    /^\/extended\/v2\/burn-blocks\/[^/]+$/,
    'burn block',
    async (sql, url, { status, body }) => {
      const found = await findBurnBlock(sql, blockLocator(decodeURIComponent(url.pathname.split('/')[4])));
      return {
        want: status === 404 ? undefined : goldenBurnBlockOf(body),
        got: found && burnBlockOf(found),
      };
    },
  ],
  [
    /^\/extended\/v2\/burn-blocks\/[^/]+\/blocks$/,
    'burn block blocks',
    async (sql, url, { status, body }) => {
      const page = await listBurnBlockBlocks(
        sql,
        blockLocator(decodeURIComponent(url.pathname.split('/')[4])),
        { limit: intParam(url, 'limit', 20), offset: intParam(url, 'offset', 0) },
      );
      const blocks = page.blocks.map((b) => ({
        height: b.block_height,
        index_block_hash: b.index_block_hash,
      }));
      if (status === 404) return { want: [false], got: [page.found] };
      return { want: [true, body.total, goldenBlocks(body)], got: [page.found, page.total, blocks] };
    },
  ],
  [
    /^\/extended\/v1\/tx$/,
    'recent txs',
    async (sql, url, { body }) => {
      const types = url.searchParams.getAll('type').flatMap((t) => t.split(','));
      const page = await listRecentTxs(sql, {
        types: types.length > 0 ? types : null,
        unanchored: url.searchParams.get('unanchored') === 'true',
        limit: intParam(url, 'limit', 20),
        offset: intParam(url, 'offset', 0),
      });
      return {
        want: [body.total, inChainOrder(body.results)],
        got: [page.total, inChainOrder(page.txs)],
      };
    },
  ],
  [
    /^\/extended\/v2\/addresses\/[^/]+\/transactions$/,
    'address txs',
    async (sql, url, { body }) => {
      const principal = decodeURIComponent(url.pathname.split('/')[4]);
      const page = await listAddressTransactions(sql, principal, {
        limit: intParam(url, 'limit', 20),
        offset: intParam(url, 'offset', 0),
      });
      // an unconfirmed microblock tx has no index block hash: the answer shows "0x", as its block hash
      const cursorOf = (p: typeof page.cursor) =>
        p && `${p.index_block_hash || '0x'}:${p.microblock_sequence}:${p.tx_index}`;
      return {
        want: [
          body.total,
          body.cursor,
          body.next_cursor,
          body.prev_cursor,
          inChainOrder((body.results as Body[]).map((r) => r.tx)),
        ],
        got: [
          page.total,
          cursorOf(page.cursor),
          cursorOf(page.nextCursor),
          cursorOf(page.prevCursor),
          inChainOrder(page.txs.map((t) => t.tx ?? { ...t.key })),
        ],
      };
    },
  ],
  [
    /^\/extended\/v2\/addresses\/[^/]+\/transactions\/[^/]+\/events$/,
    'address tx events',
    async (sql, url, { status, body }) => {
      const [, , , , principal, , txId] = url.pathname.split('/');
      const page = await listAddressTxEvents(
        sql,
        decodeURIComponent(principal),
        `0x${txId.replace(/^0x/, '').toLowerCase()}`,
        { limit: intParam(url, 'limit', 20), offset: intParam(url, 'offset', 0) },
      );
      if (status === 404) return { want: false, got: page.found };
      return {
        want: [body.total, (body.results as Body[]).map((e) => [e.type, e.event_index])],
        got: [page.total, page.events.map((e) => [EVENT_TYPES[e.kind], e.event_index])],
      };
    },
  ],
  [
    /^\/extended\/v1\/address\/[^/]+\/nonces$/,
    'nonces',
    async (sql, url, { body }) => {
      const n = await getNonces(sql, decodeURIComponent(url.pathname.split('/')[4]));
      return {
        want: body,
        got: {
          last_mempool_tx_nonce: n.lastMempool,
          last_executed_tx_nonce: n.lastExecuted,
          possible_next_nonce: n.possibleNext,
          detected_missing_nonces: n.detectedMissing,
          detected_mempool_nonces: n.detectedMempool,
        },
      };
    },
  ],
  [
    /^\/extended\/v2\/addresses\/[^/]+\/balances\/ft$/,
    'ft balances',
    async (sql, url, { body }) => {
      const page = await listFtBalances(sql, decodeURIComponent(url.pathname.split('/')[4]), {
        limit: intParam(url, 'limit', 100),
        offset: intParam(url, 'offset', 0),
      });
      return {
        want: [body.total, body.results],
        got: [page.total, page.balances.map((b) => ({ token: b.asset_identifier, balance: b.balance }))],
      };
    },
  ],
  [
    /^\/extended\/v1\/tokens\/nft\/holdings$/,
    'nft holdings',
    async (sql, url, { body }) => {
      const assets = url.searchParams.getAll('asset_identifiers').flatMap((a) => a.split(','));
      const page = await listNftHoldings(sql, url.searchParams.get('principal')!, {
        assetIdentifiers: assets.length > 0 ? assets : null,
        unanchored: url.searchParams.get('unanchored') === 'true',
        limit: intParam(url, 'limit', 50),
        offset: intParam(url, 'offset', 0),
      });
      return {
        want: [
          body.total,
          (body.results as Body[]).map((h) => [h.asset_identifier, h.value.hex, h.block_height, h.tx_id]),
        ],
        got: [page.total, page.holdings.map((h) => [h.asset_identifier, h.value, h.block_height, h.tx_id])],
      };
    },
  ],
  [
    /^\/extended\/v1\/contract\/[^/]+$/,
    'contract',
    async (sql, url, { status, body }) => {
      const found = await findContractSource(sql, decodeURIComponent(url.pathname.split('/')[4]));
      if (status === 404) return { want: undefined, got: found };
      return {
        want: { ...body, abi: JSON.parse(body.abi as string) },
        got: found && {
          tx_id: found.tx_id,
          canonical: found.canonical,
          contract_id: found.contract_id,
          block_height: found.block_height,
          clarity_version: found.clarity_version,
          source_code: found.source_code,
          abi: found.abi,
        },
      };
    },
  ],
  [/^\/extended\/v1\/search\/[^/]+$/, 'search', checkSearch],
];

/** The search answers: a hash, a contract or an address, as the golden classified the term. */
async function checkSearch(sql: Sql, url: URL, { body }: GoldenRecord) {
  const term = decodeURIComponent(url.pathname.split('/')[4]).trim();
  const b = body as Body;
  const kind: string = b.result.entity_type;
  if (kind === 'contract_address') {
    const hit = await searchContract(sql, term);
    return {
      want: b.found ? b.result.tx_data.tx_id : null,
      got: hit?.tx_id ?? null,
    };
  }
  if (kind === 'standard_address') return { want: b.found, got: await searchAddress(sql, term) };
  const hits = await searchHash(sql, `0x${term.replace(/^0x/, '').toLowerCase()}`);
  const got = hits.tx
    ? { entity_type: 'tx_id', canonical: hits.tx.canonical, block_height: hits.tx.block_height }
    : hits.mempoolTx
      ? { entity_type: 'mempool_tx_id' }
      : hits.block
        ? { entity_type: 'block_hash', canonical: hits.block.canonical, height: hits.block.block_height }
        : { entity_type: 'unknown_hash' };
  const data = b.result.tx_data ?? b.result.block_data ?? {};
  const want =
    kind === 'tx_id'
      ? { entity_type: kind, canonical: data.canonical, block_height: data.block_height }
      : kind === 'block_hash'
        ? { entity_type: kind, canonical: data.canonical, height: data.height }
        : { entity_type: kind };
  return { want, got };
}

/**
 * Where the original answers otherwise on purpose, by kind: the answer's fields as the read gives them would
 * be a golden's but for that kind.
 * - `search`: a tx id with an orphaned and a canonical row: the original may name the orphaned one, the read
 *   prefers the canonical (docs/upstream.md C.17).
 * - `genesis`: the original's v2 address list leaves out the txs of a block 0 (moved into block 1, D.3) that
 *   its v1 list (A.8) and the block's txs (C.2) show; the read lists them.
 * - `count`: after a reorg the original's v2 address list `total` counts fewer txs than it lists; the read's
 *   counts the txs it lists.
 */
type Difference = 'search' | 'genesis' | 'count';

/** The chain's block 0 txs, from its messages. */
function genesisTxIds(fixture: string): Set<string> {
  const ids = new Set<string>();
  for (const m of fixtureMessages(fixture)) {
    if (m.path !== '/new_block') continue;
    const block = JSON.parse(m.payload) as { block_height: number; transactions: { txid: string }[] };
    if (block.block_height === 0) for (const tx of block.transactions) ids.add(tx.txid);
  }
  return ids;
}

async function differenceOf(
  sql: Sql,
  route: string,
  url: URL,
  want: Body,
  got: Body,
  genesis: Set<string>,
): Promise<Difference | undefined> {
  if (route === 'search') {
    const orphaned = want?.entity_type === 'tx_id' && want.canonical === false && got?.canonical === true;
    return orphaned ? 'search' : undefined;
  }
  if (route !== 'address txs') return undefined;
  const onlyTotal = want[0] < got[0] && util.isDeepStrictEqual(want.slice(1), got.slice(1));
  if (genesis.size === 0) return onlyTotal ? 'count' : undefined;
  // the whole list without the block 0 txs, then the page
  const principal = decodeURIComponent(url.pathname.split('/')[4]);
  const all = await listAddressTransactions(sql, principal, { limit: 100_000, offset: 0 });
  const kept = all.txs.map((t) => t.tx!).filter((tx) => !genesis.has(tx.tx_id));
  const offset = intParam(url, 'offset', 0);
  const page = kept.slice(offset, offset + intParam(url, 'limit', 20));
  const total = page.length > 0 ? kept.length : 0;
  const same = want[0] === total && util.isDeepStrictEqual(want[4], inChainOrder(page));
  return same && page.length < all.txs.length ? 'genesis' : undefined;
}

/** The goldens each kind of difference shows in: anywhere else it is a failure. */
const DIFFERENCES_IN: Record<Difference, RegExp> = {
  search: /mainnet-reorg-scenario1$/,
  genesis: /mainnet-block0$|regtest-env-pox-4/,
  count: /mainnet-reorg-scenario[12]$/,
};

async function ingest(store: Store, fixture: string) {
  const ingestor = new Ingestor(store, { isMainnet: fixtureIsMainnet(fixture), logger: silentLogger });
  for (const m of fixtureMessages(fixture)) await ingestor.take(m.path, m.payload, m.receivedAt);
}

/** The fixture a beyond golden answers on: `beyond/<fixture>` or `generated/<chain>-beyond`. */
const fixtureOf = (golden: string) => golden.replace(/^beyond\//, '').replace(/-beyond$/, '');

/** The answers a read serves: every 200, and the 404s a read says by an empty result. */
const served = (record: GoldenRecord) => record.status === 200 || record.status === 404;

describe('the store reads of the routes beyond the ten, against the original API (postgres)', () => {
  const checked: Record<string, number> = {};
  for (const golden of beyondGoldenNames()) {
    test(golden, async (t) => {
      const store = await openTestStore('postgres');
      try {
        await ingest(store, fixtureOf(golden));
        const failures: string[] = [];
        const differences: Record<string, number> = {};
        const genesis = genesisTxIds(fixtureOf(golden));
        for (const record of loadGolden(golden)) {
          const url = new URL(record.path, 'http://golden');
          const route = ROUTES.find(([pattern]) => pattern.test(url.pathname));
          if (!route || !served(record)) continue;
          const [, name, check] = route;
          // the 404s of a malformed path are the answer modules' (their 400s and 404s say so)
          if (record.status === 404 && /not-a-|\/x\/|nonsense/.test(url.pathname)) continue;
          const { want, got } = await check(store.sql, url, record);
          checked[name] = (checked[name] ?? 0) + 1;
          try {
            assert.deepStrictEqual(got, want);
          } catch {
            const kind = await differenceOf(store.sql, name, url, want, got, genesis);
            if (kind && DIFFERENCES_IN[kind].test(golden)) differences[kind] = (differences[kind] ?? 0) + 1;
            else
              failures.push(`${record.path}\n  want ${JSON.stringify(want)}\n  got  ${JSON.stringify(got)}`);
          }
        }
        t.diagnostic(`answers differing on purpose: ${JSON.stringify(differences)}`);
        assert.deepEqual(failures.slice(0, 5), [], `${failures.length} answers differ`);
      } finally {
        await store.close();
      }
    });
  }
  test('every route was checked', (t) => {
    t.diagnostic(`answers checked per route: ${JSON.stringify(checked)}`);
    assert.deepEqual(
      Object.keys(checked).sort(),
      ROUTES.map(([, name]) => name).sort(),
      JSON.stringify(checked),
    );
  });
});

describe('NFT holdings of a holder with many NFTs, page by page (postgres)', () => {
  const HOLDER = 'SP3FBR2AGK5H9QBDH3EEN6DF8EK8JY7RX8QJ5SVTE';
  const OTHER = 'SP2J6ZY48GV1EZ5V2V5RB9MP66SW86PYKKNRV9EJ7';
  const ART = 'SP000000000000000000002Q6VF78.art::nft';
  const BADGE = 'SP000000000000000000002Q6VF78.badge::nft';
  const TIP = 500;
  const hex = (n: number, digits: number) => n.toString(16).padStart(digits, '0');

  interface Nft {
    asset_identifier: string;
    value: string;
    value_repr: string;
    owner: string;
    tx_id: string;
    index_block_hash: string;
    microblock_hash: string;
    block_height: number;
    microblock_sequence: number;
    tx_index: number;
    event_index: number;
  }
  const nft = (n: number, owner: string, at: [number, number, number, number], asset: string): Nft => ({
    asset_identifier: asset,
    value: `0x01${hex(n, 32)}`,
    value_repr: `u${n}`,
    owner,
    tx_id: `0x${hex(n, 64)}`,
    index_block_hash: at[0] > TIP ? '' : `0x${hex(at[0], 64)}`,
    microblock_hash: at[0] > TIP ? `0x${hex(at[1] + 1, 64)}` : '',
    block_height: at[0],
    microblock_sequence: at[1],
    tx_index: at[2],
    event_index: at[3],
  });
  // The holder's 432 NFTs: three a block from height 2 to 145, art and badge in turn, and two at height 1 whose
  // positions tie (docs/upstream.md "Ties": a genesis tx moved into block 1); another owner's rows between.
  const custody: Nft[] = [
    ...Array.from({ length: 430 }, (_, i) =>
      nft(i, HOLDER, [2 + Math.floor(i / 3), 0, i % 3, 0], i % 2 === 0 ? ART : BADGE),
    ),
    nft(1000, HOLDER, [1, 0, 0, 0], ART),
    nft(1001, HOLDER, [1, 0, 0, 0], ART),
    ...Array.from({ length: 40 }, (_, i) => nft(2000 + i, OTHER, [2 + i, 0, 3, 0], ART)),
  ];
  // The unconfirmed stream above the tip: NFT 429 (badge) leaves the holder; NFT 100 (art) leaves it and comes
  // back; NFT 3000 (art) is new to it.
  const stream: (Nft & { recipient: string })[] = [
    { ...nft(429, HOLDER, [TIP + 1, 0, 0, 0], BADGE), recipient: OTHER },
    { ...nft(100, HOLDER, [TIP + 1, 0, 1, 0], ART), recipient: OTHER },
    { ...nft(100, HOLDER, [TIP + 1, 1, 0, 0], ART), recipient: HOLDER },
    { ...nft(3000, HOLDER, [TIP + 1, 1, 2, 1], ART), recipient: HOLDER },
  ].map((e, i) => ({ ...e, tx_id: `0x${hex(9000 + i, 64)}` }));

  const newestFirst = (a: Nft, b: Nft) =>
    b.block_height - a.block_height ||
    b.microblock_sequence - a.microblock_sequence ||
    b.tx_index - a.tx_index ||
    b.event_index - a.event_index ||
    a.tx_id.localeCompare(b.tx_id); // ties: by tx id, as `inPageOrder` puts a page's
  /** The whole ordered list, by C.15's rule: the latest event of each NFT names its holder. */
  function heldBy(unanchored: boolean, assets: string[] | null): Nft[] {
    const latest = new Map<string, Nft>(custody.map((c) => [`${c.asset_identifier} ${c.value}`, c]));
    if (unanchored)
      for (const e of stream) latest.set(`${e.asset_identifier} ${e.value}`, { ...e, owner: e.recipient });
    return [...latest.values()]
      .filter((n) => n.owner === HOLDER && (assets === null || assets.includes(n.asset_identifier)))
      .sort(newestFirst);
  }
  const shown = (n: Pick<Nft, 'asset_identifier' | 'value' | 'block_height' | 'tx_id'>) =>
    [n.asset_identifier, n.value, n.block_height, n.tx_id] as const;
  /**
   * A page as the read gave it, but the two NFTs whose positions tie (height 1, at the end of each list) by tx
   * id: their order is not defined, and the read gives no position to tell them by.
   */
  const inPageOrder = (page: NftHolding[]) => {
    const tied = page.filter((h) => h.block_height === 1).sort((a, b) => a.tx_id.localeCompare(b.tx_id));
    return [...page.filter((h) => h.block_height !== 1), ...tied].map(shown);
  };

  test('every page of 50 and of 37, with and without the stream and an asset filter, is its slice of the list', async () => {
    const store = await openTestStore('postgres');
    try {
      const sql = store.sql;
      await sql`UPDATE chain_tip SET block_height = ${TIP}`;
      await sql`INSERT INTO nft_custody ${sql(custody)}`;
      await sql`INSERT INTO events ${sql(
        stream.map(({ owner: _owner, ...e }, i) => ({
          ...e,
          canonical: true,
          microblock_canonical: true,
          kind: EventKind.nftAsset,
          sender: i === 2 ? OTHER : HOLDER,
        })),
      )}`;
      const read = (unanchored: boolean, assets: string[] | null, limit: number, offset: number) =>
        listNftHoldings(sql, HOLDER, { assetIdentifiers: assets, unanchored, limit, offset });

      // concrete ends of the lists
      const first = await read(false, null, 2, 0);
      assert.equal(first.total, 432);
      assert.deepEqual(first.holdings.map(shown), [
        [BADGE, `0x01${hex(429, 32)}`, 145, `0x${hex(429, 64)}`],
        [ART, `0x01${hex(428, 32)}`, 144, `0x${hex(428, 64)}`],
      ]);
      const firstStreamed = await read(true, null, 3, 0);
      assert.equal(firstStreamed.total, 432);
      assert.deepEqual(
        firstStreamed.holdings.map((h) => [h.value_repr, h.block_height, h.tx_id]),
        [
          ['u3000', TIP + 1, `0x${hex(9003, 64)}`],
          ['u100', TIP + 1, `0x${hex(9002, 64)}`],
          ['u428', 144, `0x${hex(428, 64)}`],
        ],
      );
      const last = await read(false, [ART], 3, 214);
      assert.equal(last.total, 217);
      assert.deepEqual(last.holdings.map((h) => h.value_repr).sort(), ['u0', 'u1000', 'u1001']);
      assert.deepEqual(await read(true, null, 50, 432), { total: 0, holdings: [] });

      for (const unanchored of [false, true]) {
        for (const assets of [null, [ART], [BADGE, ART]]) {
          const all = heldBy(unanchored, assets);
          for (const limit of [50, 37]) {
            for (let offset = 0; offset < all.length; offset += limit) {
              const page = await read(unanchored, assets, limit, offset);
              const what = `unanchored ${unanchored}, ${JSON.stringify(assets)}, limit ${limit} offset ${offset}`;
              assert.equal(page.total, all.length, what);
              assert.deepEqual(
                inPageOrder(page.holdings),
                all.slice(offset, offset + limit).map(shown),
                what,
              );
            }
          }
        }
      }
    } finally {
      await store.close();
    }
  });
});
