// Where we answer differently from the original API on purpose (its bugs we fix: docs/upstream.md, README).
// Each entry names the golden paths it covers and what we answer instead; the conformance harness checks
// that we do answer that (status, and the body predicate), instead of comparing with the golden record.

export interface GoldenRecordLike {
  path: string;
  status: number;
  body: unknown;
}

/** What an expectation may consult: the fixture's other golden records, and the harness's comparison. */
export interface GoldenContext {
  /** the golden record of a path, if the reference was asked it */
  golden(path: string): GoldenRecordLike | undefined;
  /** every golden record of the fixture */
  records(): GoldenRecordLike[];
  /** the harness's comparison (normalized): the first difference, or null when equal */
  compare(path: string, ours: unknown, expected: unknown): string | null;
}

export interface DeliberateDifference {
  /** matched against the golden record's path (with query string) */
  path: RegExp;
  /** optional: only golden records with this status */
  goldenStatus?: number;
  /** optional: only golden records for which this holds */
  applies?: (golden: GoldenRecordLike, context: GoldenContext) => boolean;
  /** what upstream does, in a few words */
  upstream: string;
  /** what we answer instead */
  ours: string;
  expectStatus: number;
  /** extra check on our body; returns an explanation when it fails */
  expectBody?: (body: unknown, golden: GoldenRecordLike, context: GoldenContext) => string | null;
}

const errorMessage = (body: unknown) => (body as { message?: unknown })?.message;

interface Page {
  limit: number;
  offset: number;
  total: number;
  results: { tx: { tx_id: string }; ft_transfers: unknown[]; nft_transfers: unknown[] }[];
}

const ADDRESS_PATH = /^\/extended\/v1\/address\/([^/?]+)\//;
const UNTIL_HASH = /([?&])until_block=(0x[0-9a-f]{64})(?=&|$)/;

/** The height of a block named by its index block hash, from any golden block record (orphans too). */
function heightOfIndexHash(hash: string, context: GoldenContext): number | undefined {
  for (const r of context.records()) {
    if (r.status !== 200 || !/^\/extended\/(v2\/blocks|v1\/block\/by_burn_block_height)\//.test(r.path))
      continue;
    const block = r.body as { index_block_hash?: string; height?: number };
    if (block.index_block_hash === hash) return block.height;
  }
  return undefined;
}

type Listed = Page['results'][number];

const LIST_PATH = /^\/extended\/v1\/address\/([^/?]+)\/transactions_with_transfers(?:\?|$)/;
const listedByContext = new WeakMap<GoldenContext, Map<string, Listed>>();

/**
 * The entry of a tx in the principal's golden transaction lists (they carry FT and NFT transfers): any page
 * of any of them (a generated chain's principals are asked every page), indexed once per fixture.
 */
function listedTx(principal: string, txId: string, context: GoldenContext): Listed | undefined {
  let listed = listedByContext.get(context);
  if (!listed) {
    listed = new Map();
    for (const r of context.records()) {
      const list = LIST_PATH.exec(r.path);
      if (!list || r.status !== 200) continue;
      for (const entry of (r.body as Page).results) {
        const key = `${list[1]} ${entry.tx.tx_id}`;
        if (!listed.has(key)) listed.set(key, entry);
      }
    }
    listedByContext.set(context, listed);
  }
  return listed.get(`${principal} ${txId}`);
}

const WITH_TRANSFERS = /^\/extended\/v1\/address\/([^/]+)\/([^/]+)\/with_transfers$/;

interface Balances {
  stx: { lock_tx_id: string; burnchain_lock_height: number };
}

/** The burn height of the canonical block of a tx, from its golden `/tx` record. */
function canonicalBurnHeight(txId: string, context: GoldenContext): number | undefined {
  const tx = context.golden(`/extended/v1/tx/${txId}`);
  const body = tx?.body as { canonical?: boolean; burn_block_height?: number } | undefined;
  return tx?.status === 200 && body?.canonical ? body.burn_block_height : undefined;
}

// ETags. The harness compares status and body, not headers (the golden records' ETags are the reference's
// values; ours are keyed on our chain state), so these differences are listed here rather than checked:
// - `/extended/v2/blocks/:height_or_hash`: upstream's tag is `<index_block_hash>:<canonical>`, looked up by
//   `latest`, a height or an index block hash, so a path naming a block by its block hash gets no ETag.
//   Ours is `<tip index block hash>:<what the path names>` (`latest`, the height, the hash in lower case) for
//   every form, block hashes included: a block hash and an index block hash are both 64 hex digits, and
//   telling which one a path holds would cost the database read the tag exists to save; what any of these
//   paths answers (which block, and whether it is canonical) changes only with the tip, so the tag is as
//   valid for a block hash as for the rest, and lets its answer be kept (src/api/routes/blocks.ts).
//   test/api/http-conventions.test.ts ("chain-tip ETags change...") asserts the tags.
interface AddressTxList {
  total: number;
  results: { tx: { tx_id: string; block_height: number } }[];
}

const V2_LIST_PATH = /^\/extended\/v2\/addresses\/([^/?]+)\/transactions(?:\?|$)/;

/**
 * Whether the golden v2 list of a principal undercounts: its `total` below the txs of its largest page, or
 * below the principal's v1 list (A.8), a subset of the v2 list (C.9).
 */
function v2ListUndercounts(principal: string, context: GoldenContext): boolean {
  let total = 0;
  let listed = 0;
  let v1Total = 0;
  for (const r of context.records()) {
    if (r.status !== 200) continue;
    const v2 = V2_LIST_PATH.exec(r.path);
    const v1 = LIST_PATH.exec(r.path);
    if (v2?.[1] === principal) {
      const page = r.body as AddressTxList;
      total = Math.max(total, page.total);
      listed = Math.max(listed, page.results.length);
    } else if (v1?.[1] === principal) {
      v1Total = Math.max(v1Total, (r.body as Page).total);
    }
  }
  return total < Math.max(listed, v1Total);
}

/**
 * Our v2 list page against the original's where the original leaves out block 0's txs (all at height 1, the
 * oldest of a list) or undercounts after a reorg: the same items at every position where either holds a tx
 * above height 1, at least as many items, and a `total` at least as large.
 */
function v2ListBeside(ours: AddressTxList, golden: AddressTxList): string | null {
  if (ours.total < golden.total) return `total ${ours.total} below the original's ${golden.total}`;
  if (ours.results.length < golden.results.length) return `fewer txs than the original's page`;
  for (let i = 0; i < ours.results.length; i++) {
    const a = ours.results[i].tx;
    const b = golden.results[i]?.tx;
    if ((a.block_height > 1 || (b && b.block_height > 1)) && a.tx_id !== b?.tx_id)
      return `results.${i}: ${a.tx_id} vs ${b?.tx_id}`;
  }
  return null;
}

/** The STX member of a balances answer, or the answer itself where it is an STX balance. */
const stxOf = (golden: GoldenRecordLike): Balances['stx'] =>
  /\/balances$/.test(golden.path.split('?')[0]) && !golden.path.includes('/v2/')
    ? (golden.body as Balances).stx
    : (golden.body as Balances['stx']);

const deliberateDifferences: DeliberateDifference[] = [
  {
    path: /^\/extended\/v2\/blocks\/-\d+$/,
    upstream: 'a negative height passes validation and the handler fails: 500 "Invalid block height or hash"',
    ours: '400 with a message saying a height is a whole number, 0 or more',
    expectStatus: 400,
    expectBody: (body) =>
      typeof errorMessage(body) === 'string' && /whole number, 0 or more/.test(errorMessage(body) as string)
        ? null
        : `expected a 400 message about the height, got ${JSON.stringify(body)}`,
  },
  {
    path: /./,
    goldenStatus: 400,
    applies: (golden) => (golden.body as { code?: unknown }).code === 'FST_ERR_VALIDATION',
    upstream:
      'Ajv\'s own text, e.g. `params/tx_id must match pattern "^(0x)?[a-fA-F0-9]{64}$"`, a union\'s errors joined',
    ours: 'the same 400 body (code FST_ERR_VALIDATION), its message in words: the parameter, where, what is wrong',
    expectStatus: 400,
    expectBody: (body, golden) => {
      const theirs = golden.body as { statusCode: number; code: string; error: string; message: string };
      const ours = body as typeof theirs;
      if (ours.code !== theirs.code || ours.error !== theirs.error || ours.statusCode !== theirs.statusCode) {
        return `expected the body of a validation error, got ${JSON.stringify(body)}`;
      }
      // `<part>/<name> ...`, or `<part> must have required property '<name>'`
      const [, part, name] = /^(params|querystring)(?:\/(\w+)|.*'(\w+)')/
        .exec(theirs.message)!
        .filter(Boolean);
      const says = `${part === 'params' ? 'path' : 'query'} parameter ${name} `;
      return ours.message.startsWith(says) &&
        !/must match|anyOf|constant|required property/.test(ours.message)
        ? null
        : `expected a message in words starting "${says}", got "${ours.message}"`;
    },
  },
  {
    path: /\/transactions_with_transfers\?(?:.*&)?offset=\d+/,
    goldenStatus: 200,
    upstream: 'an offset at or past the end reads `total` from the (empty) page: `total: 0`',
    ours: 'the true total (that of the same list read from offset 0) with an empty page',
    expectStatus: 200,
    expectBody: (body, golden, context) => {
      const page = golden.body as Page;
      if (page.results.length > 0 || page.total > 0) return context.compare(golden.path, body, page);
      const list = context.golden(golden.path.split('?')[0]);
      if (list?.status !== 200) return 'no golden record of the list from offset 0 to take the total from';
      return context.compare(golden.path, body, { ...page, total: (list.body as Page).total });
    },
  },
  {
    path: /^\/extended\/v1\/address\/[^/]+\/[^/]+\/with_transfers$/,
    goldenStatus: 200,
    upstream: 'the answer has no `ft_transfers` / `nft_transfers` members',
    ours: 'the full "transaction with transfers" shape (contract 2.4): with the FT and NFT transfers too',
    expectStatus: 200,
    expectBody: (body, golden, context) => {
      const [, principal, txId] = WITH_TRANSFERS.exec(golden.path)!;
      const ours = body as { ft_transfers?: unknown; nft_transfers?: unknown };
      if (!Array.isArray(ours.ft_transfers) || !Array.isArray(ours.nft_transfers)) {
        return `expected ft_transfers and nft_transfers arrays, got ${JSON.stringify(body)?.slice(0, 200)}`;
      }
      const listed = listedTx(principal, txId, context);
      const transfers = listed
        ? { ft_transfers: listed.ft_transfers, nft_transfers: listed.nft_transfers }
        : { ft_transfers: ours.ft_transfers, nft_transfers: ours.nft_transfers };
      return context.compare(golden.path, body, { ...(golden.body as object), ...transfers });
    },
  },
  {
    path: WITH_TRANSFERS,
    goldenStatus: 404,
    applies: (golden, context) => {
      const [, principal, txId] = WITH_TRANSFERS.exec(golden.path)!;
      return listedTx(principal, txId, context) !== undefined;
    },
    upstream:
      'a tx is found only when the principal is its sender, recipient, contract, or party of an STX event: 404 for a principal that only sent or received FT/NFT in it',
    ours: 'every tx the principal’s transactions_with_transfers lists is found, with its entry of that list',
    expectStatus: 200,
    expectBody: (body, golden, context) => {
      const [, principal, txId] = WITH_TRANSFERS.exec(golden.path)!;
      return context.compare(golden.path, body, listedTx(principal, txId, context));
    },
  },
  {
    // the balances, and the STX balance routes beyond the ten that show the same lock (C.12, C.13)
    path: /^\/extended\/(v1\/address\/[^/]+\/(balances|stx)(\?unanchored=true)?|v2\/addresses\/[^/]+\/balances\/stx)$/,
    goldenStatus: 200,
    applies: (golden, context) => {
      const { lock_tx_id, burnchain_lock_height } = stxOf(golden);
      const burn = lock_tx_id ? canonicalBurnHeight(lock_tx_id, context) : undefined;
      return burn !== undefined && burn !== burnchain_lock_height;
    },
    upstream:
      'the current lock is the lock event written last, even one of a non-canonical sibling block: its burn height shows',
    ours: 'the lock of the canonical chain: `burnchain_lock_height` is the burn height of the canonical block of the lock tx',
    expectStatus: 200,
    expectBody: (body, golden, context) => {
      const expected = structuredClone(golden) as GoldenRecordLike;
      const stx = stxOf(expected);
      stx.burnchain_lock_height = canonicalBurnHeight(stx.lock_tx_id, context)!;
      return context.compare(golden.path, body, expected.body);
    },
  },
  {
    path: UNTIL_HASH,
    goldenStatus: 404,
    applies: (golden, context) => heightOfIndexHash(UNTIL_HASH.exec(golden.path)![2], context) !== undefined,
    upstream: '`until_block=0x…` is looked up by block hash only: an index block hash gives 404',
    ours: 'the block is found by block hash or index block hash: the answer as of that block’s height',
    expectStatus: 200,
    expectBody: (body, golden, context) => {
      const height = heightOfIndexHash(UNTIL_HASH.exec(golden.path)![2], context)!;
      const atHeight = context.golden(golden.path.replace(UNTIL_HASH, `$1until_block=${height}`));
      if (atHeight?.status === 200) return context.compare(golden.path, body, atHeight.body);
      // At the tip height the answer is the current one (balances without their mempool part).
      const latest = context.golden('/extended/v2/blocks/latest');
      const current = context.golden(golden.path.replace(UNTIL_HASH, '').replace(/\?$/, ''));
      if ((latest?.body as { height?: number })?.height === height && current?.status === 200) {
        const expected = structuredClone(current.body) as { stx?: Record<string, unknown> };
        if (expected.stx) {
          for (const k of ['estimated_balance', 'pending_balance_inbound', 'pending_balance_outbound']) {
            delete expected.stx[k];
          }
        }
        return context.compare(golden.path, body, expected);
      }
      return ADDRESS_PATH.test(golden.path) && body && typeof body === 'object'
        ? null
        : `expected an answer as of height ${height}, got ${JSON.stringify(body)?.slice(0, 200)}`;
    },
  },
  {
    path: /^\/extended\/v1\/search\/[^/?]+$/,
    goldenStatus: 200,
    applies: (golden) => {
      const { result } = golden.body as {
        result: { entity_type: string; tx_data?: { canonical?: boolean } };
      };
      return result.entity_type === 'tx_id' && result.tx_data?.canonical === false;
    },
    upstream:
      'a tx id with an orphaned and a canonical row: whichever row its query finds first, the orphaned one too (docs/upstream.md C.17)',
    ours: 'the canonical row when there is one',
    expectStatus: 200,
    expectBody: (body, golden, context) => {
      if (context.compare(golden.path, body, golden.body) === null) return null;
      const ours = body as { result: { entity_id: string; tx_data: { canonical: boolean } } };
      const theirs = golden.body as typeof ours;
      return ours.result.entity_id === theirs.result.entity_id && ours.result.tx_data.canonical
        ? null
        : `expected the canonical row of ${theirs.result.entity_id}, got ${JSON.stringify(body)}`;
    },
  },
  {
    path: V2_LIST_PATH,
    goldenStatus: 200,
    applies: (golden, context) => v2ListUndercounts(V2_LIST_PATH.exec(golden.path)![1], context),
    upstream:
      'the v2 address list leaves out the txs of a block 0 (moved into block 1), which its v1 list and the block show, and after a reorg its `total` counts fewer txs than it lists (docs/upstream.md C.9)',
    ours: 'every canonical tx of the principal, block 0’s included, and a `total` that counts them',
    expectStatus: 200,
    expectBody: (body, golden) => v2ListBeside(body as AddressTxList, golden.body as AddressTxList),
  },
  {
    // not in the goldens (they ask the v1 block by burn block height only): listed so a capture that asks it
    // is compared with what we answer on purpose
    path: /^\/extended\/v1\/block\/by_burn_block_hash\/(?!(0x)?([0-9a-fA-F]{2})*(\?|$))/,
    goldenStatus: 404,
    upstream:
      'a burn block hash that is not hex is looked up anyway: 404 "cannot find block by burn block hash"',
    ours: '400 saying the parameter must be hex, as for a block or microblock hash (docs/upstream.md C.18)',
    expectStatus: 400,
    expectBody: (body) =>
      (body as { statusCode?: unknown })?.statusCode === 400
        ? null
        : `expected a 400 body, got ${JSON.stringify(body)}`,
  },
  {
    path: /^\/extended\/v1\/tx\/multiple\?/,
    goldenStatus: 200,
    applies: (golden) =>
      Object.values(golden.body as Record<string, { found: boolean }>).every((entry) => !entry.found),
    upstream: 'when none of the ids is found: 200 with every entry {found: false}',
    ours: '404 "could not find any of the transactions by ID", as contract 4.4 says',
    expectStatus: 404,
    expectBody: (body) =>
      errorMessage(body) === 'could not find any of the transactions by ID'
        ? null
        : `expected the 404 of contract 4.4, got ${JSON.stringify(body)}`,
  },
];

export function findDeliberateDifference(
  golden: GoldenRecordLike,
  context: GoldenContext,
): DeliberateDifference | undefined {
  return deliberateDifferences.find(
    (d) =>
      d.path.test(golden.path) &&
      (d.goldenStatus === undefined || d.goldenStatus === golden.status) &&
      (d.applies === undefined || d.applies(golden, context)),
  );
}
