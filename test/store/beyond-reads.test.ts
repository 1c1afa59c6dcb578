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
import { listNftHoldings } from '../../src/store/read/nft-holdings.js';
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
