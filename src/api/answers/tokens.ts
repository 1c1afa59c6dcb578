import { InvalidRequestError } from '../../errors.js';
import { cachedChainState } from '../../store/read/chain-state.js';
import { listNftHoldings } from '../../store/read/nft-holdings.js';
import { findMinedTxsByKey, type MinedTxRecord, type MinedTxRowKey } from '../../store/read/txs.js';
import type { Store } from '../../store/store.js';
import { AnswerCache } from '../cache/answer-cache.js';
import { pageOf } from '../render/pages.js';
import { serializerOf } from '../render/serializer.js';
import { minedTransaction } from '../render/txs.js';
import { PAGE_SIZES } from '../schemas/lists.js';
import { getNftHoldingsRoute } from '../schemas/nft-holdings.js';
import { principalProblem } from '../schemas/params.js';
import { holds, jsonAnswer, notModified, type Answer, type Asked } from './answer.js';
import { chainTag, tipState } from './tags.js';

// GET /extended/v1/tokens/nft/holdings?principal= (docs/upstream.md C.15). Tagged by the tip and its
// microblock (`unanchored` counts the stream's events): a client holding the tag gets its 304 before any read.
// Caches (docs/caching.md): its whole answers, under the tip and its microblock, cached when first made (one
// principal's pages, as the account listings are: answers/account.ts). A page is read from the principal's
// holdings, bounded by what it holds: a holder of thousands of NFTs costs milliseconds a page
// (F-read-nft-holdings-whole-set), which its cached answer no longer repeats while the tip stays.

interface HoldingsQuery {
  principal: string;
  asset_identifiers?: string[];
  limit: number;
  offset: number;
  unanchored: boolean;
  tx_metadata: boolean;
}

const FILE = 'src/api/answers/tokens.ts';

const writeHoldings = serializerOf(getNftHoldingsRoute.schema.response[200]);

/**
 * `<contract id>::<token name>`, its contract part a principal (else the original's 400), and no NUL (which the
 * database refuses in text: a 500 the fuzz test found).
 */
function checkAssetIdentifier(assetIdentifier: string) {
  const contract = assetIdentifier.split('::')[0];
  if (principalProblem(contract) !== null || assetIdentifier.includes('\0')) {
    throw new InvalidRequestError('Invalid asset identifier');
  }
}

const keyOf = (h: MinedTxRowKey) => `${h.tx_id}:${h.index_block_hash}:${h.microblock_hash}`;

export function tokenAnswers(store: Store) {
  const holdingsAnswers = new AnswerCache({
    name: 'answers: NFT holdings',
    file: FILE,
    state: tipState(store),
    maxBytes: 4 * 1024 * 1024,
  });

  async function nftHoldings(asked: Asked, query: HoldingsQuery): Promise<Answer> {
    const etag = chainTag(await cachedChainState(store), { withMempool: false }) ?? undefined;
    if (etag !== undefined && holds(asked, etag)) return notModified(etag);
    const assets = query.asset_identifiers?.filter((a) => a !== '') ?? [];
    assets.forEach(checkAssetIdentifier);
    // `limit=0` is the default, as the original reads it (C.0)
    const page = { limit: query.limit || PAGE_SIZES.nftHolding.fallback, offset: query.offset };
    const found = await listNftHoldings(store.sql, query.principal, {
      assetIdentifiers: assets.length > 0 ? assets : null,
      unanchored: query.unanchored,
      ...page,
    });
    // with `tx_metadata`, each holding's tx (the row of the event that gave it) replaces its id
    const txs = new Map<string, MinedTxRecord>();
    if (query.tx_metadata) {
      for (const tx of await findMinedTxsByKey(store.sql, found.holdings, null)) txs.set(keyOf(tx), tx);
    }
    const results = found.holdings.map((h) => {
      const holding = {
        asset_identifier: h.asset_identifier,
        value: { hex: h.value, repr: h.value_repr },
        block_height: h.block_height,
      };
      const tx = txs.get(keyOf(h));
      return tx ? { ...holding, tx: minedTransaction(tx) } : { ...holding, tx_id: h.tx_id };
    });
    return jsonAnswer(writeHoldings(pageOf(page, found.total, results)), etag);
  }

  return {
    cache: holdingsAnswers,
    nftHoldings: (asked: Asked, query: HoldingsQuery) =>
      holdingsAnswers.made(() => nftHoldings(asked, query)),
  };
}
