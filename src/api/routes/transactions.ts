import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import Type from 'typebox';
import { NotFoundError } from '../../errors.js';
import {
  batchedMinedTxReads,
  batchedMinedTxVersionReads,
  findMempoolTx,
  findMempoolTxs,
  findMinedTxVersions,
  findMinedTxs,
  type EventPage,
  type MempoolTxRecord,
  type MinedTxRecord,
} from '../../store/read/txs.js';
import { clientHasVersion, digestTag, sendNotModified, tipAndMempool } from '../cache/etag.js';
import { keptAnswerReadsMempool, keptWithOwnTags } from '../cache/kept-answers.js';
import { errorResponses } from '../schemas/common.js';
import {
  EVENT_LIMIT_DEFAULT,
  MAX_MULTIPLE_TX_IDS,
  TxIdParam,
  TxIdsQuery,
  TxQuery,
  splitTxIds,
} from '../schemas/params.js';
import { MempoolTransaction, Transaction, TransactionList } from '../schemas/transactions.js';
import { txByIdJsonCache } from '../cache/rendered-txs.js';
import { mempoolTransaction, minedTransaction, type RenderOptions } from '../render/txs.js';
import type { RouteOptions } from './route-options.js';
import { jsonAnswer, serializeWith } from './json-reply.js';

interface TxQueryValues {
  event_limit: number;
  event_offset: number;
  unanchored: boolean;
  exclude_function_args: boolean;
}

function eventPage(query: TxQueryValues): EventPage {
  return { offset: query.event_offset, limit: query.event_limit || EVENT_LIMIT_DEFAULT };
}

function renderOptions(query: TxQueryValues): RenderOptions {
  return { excludeFunctionArgs: query.exclude_function_args };
}

/** The query whose renderings are kept (see cache/rendered-txs.ts): the first page of 20 events, args included. */
function isDefaultQuery(query: TxQueryValues): boolean {
  return (
    query.event_offset === 0 &&
    (query.event_limit || EVENT_LIMIT_DEFAULT) === EVENT_LIMIT_DEFAULT &&
    !query.exclude_function_args
  );
}

type MinedVersionFields = Pick<MinedTxRecord, 'tx_id' | 'index_block_hash' | 'microblock_hash' | 'status'>;

/** What a client's cached copy of a tx depends on: where it is mined, or its mempool state. */
function txVersion(
  tx: { kind: 'mined'; row: MinedVersionFields } | { kind: 'mempool'; row: MempoolTxRecord },
) {
  const r = tx.row;
  return tx.kind === 'mined'
    ? `${r.tx_id}:${tx.row.index_block_hash}:${tx.row.microblock_hash}:${r.status}`
    : `${r.tx_id}:mempool:${r.status}:${tx.row.receipt_time}:${tx.row.replaced_by_tx_id ?? ''}`;
}

// Transactions are serialized with the compiled serializer of their own schema (mined or mempool), which
// drops unknown keys and keeps upstream's key order; choosing the schema here avoids a per-request `anyOf`
// match in the generic response serializer (json-reply.ts).
export const transactionRoutes: FastifyPluginAsyncTypebox<RouteOptions> = async (app, { store }) => {
  // Whole answers are kept while the chain state they were made under stays (cache/kept-answers.ts,
  // `keptWithOwnTags`): a mined tx's answer changes only when the tip or its microblock does (a reorg, a
  // microblock orphaned or confirmed), an answer that read the mempool (a mempool tx, an id not found) also
  // with the mempool version. Each keeps the ETag of the rows it was read from, so If-None-Match is answered
  // against that tag. Bound: the default 8 MB per route (~2,300 answers of a tx with its first 20 events):
  // the txs asked for more than once between two chain-state changes (an answer is kept on its second ask, so
  // a walk over the history keeps nothing and displaces nothing); past it, or after a change, a tx asked again
  // costs one primary-key read of its row's key, its rendering being kept in cache/rendered-txs.ts across tips.
  const keptTxs = keptWithOwnTags(tipAndMempool(store), { keepOnSecondAsk: true });
  const keptTxLists = keptWithOwnTags(tipAndMempool(store), { keepOnSecondAsk: true });
  // a tx read by id: the misses of requests that arrive together are read by one statement
  const readMinedTx = batchedMinedTxReads(() => store.sql);
  // the key of a tx's visible row, read to validate a kept rendering: those of requests arriving together
  // are read by one statement too
  const readMinedTxVersion = batchedMinedTxVersionReads(() => store.sql);
  app.get(
    '/extended/v1/tx/multiple',
    {
      schema: {
        operationId: 'get_tx_list_details',
        summary: 'Get details for multiple transactions',
        description:
          'Mined or mempool transactions by id. Ids come as repeated `tx_id` keys or comma-separated, ' +
          `at most ${MAX_MULTIPLE_TX_IDS}; each answer says whether that id was found. 404 when none is.`,
        tags: ['Transactions'],
        querystring: Type.Object({
          tx_id: TxIdsQuery,
          ...TxQuery,
        }),
        response: {
          200: TransactionList,
          ...errorResponses,
        },
      },
      preValidation: splitTxIds,
      ...keptTxLists,
    },
    async (request, reply) => {
      const query = request.query;
      const ids: string[] = [];
      for (const given of query.tx_id) {
        const id = given.toLowerCase();
        if (!ids.includes(id)) ids.push(id);
      }
      // txs rendered earlier with the default query whose row is still the visible one: not read again
      const kept = new Map<string, { version: MinedVersionFields; json: string }>();
      const cache = txByIdJsonCache(store);
      const keep = isDefaultQuery(query);
      const withEntry = keep ? ids.filter((id) => cache.get(id) !== undefined) : [];
      for (const now of await findMinedTxVersions(store.sql, withEntry, { unanchored: query.unanchored })) {
        const entry = cache.get(now.tx_id);
        if (
          entry?.index_block_hash === now.index_block_hash &&
          entry.microblock_hash === now.microblock_hash
        ) {
          kept.set(now.tx_id, { version: now, json: entry.json });
        }
      }
      const toRead = ids.filter((id) => !kept.has(id));
      const mined = new Map(
        (await findMinedTxs(store.sql, toRead, { unanchored: query.unanchored }, eventPage(query))).map(
          (t) => [t.tx_id, t],
        ),
      );
      const rest = toRead.filter((id) => !mined.has(id));
      const pending = new Map(
        (await findMempoolTxs(store.sql, rest, { unanchored: query.unanchored })).map((t) => [t.tx_id, t]),
      );
      if (kept.size === 0 && mined.size === 0 && pending.size === 0) {
        throw new NotFoundError('could not find any of the transactions by ID');
      }

      // Upstream order: mined txs, then mempool txs, then the ids not found (each in request order).
      // The body is spliced by hand (kept renderings are JSON text, which the 200 schema below cannot take);
      // test/api/tx-multiple-serialized.test.ts proves it is byte for byte what that schema's compiled
      // serializer makes of the same answer, for every tx of recorded chains and each query.
      const options = renderOptions(query);
      const entries: string[] = [];
      const versions: string[] = [];
      for (const id of ids) {
        const known = kept.get(id);
        if (known) {
          versions.push(txVersion({ kind: 'mined', row: known.version }));
          entries.push(`${JSON.stringify(id)}:{"found":true,"result":${known.json}}`);
          continue;
        }
        const tx = mined.get(id);
        if (!tx) continue;
        versions.push(txVersion({ kind: 'mined', row: tx }));
        const json = serializeWith(reply, Transaction, minedTransaction(tx, options));
        if (keep) cache.set(tx, json);
        entries.push(`${JSON.stringify(id)}:{"found":true,"result":${json}}`);
      }
      for (const id of ids) {
        const tx = pending.get(id);
        if (!tx) continue;
        keptAnswerReadsMempool(request);
        versions.push(txVersion({ kind: 'mempool', row: tx }));
        const json = serializeWith(reply, MempoolTransaction, mempoolTransaction(tx, options));
        entries.push(`${JSON.stringify(id)}:{"found":true,"result":${json}}`);
      }
      for (const id of ids) {
        if (kept.has(id) || mined.has(id) || pending.has(id)) continue;
        keptAnswerReadsMempool(request); // an id found nowhere may arrive in the mempool
        versions.push(`${id}:none`);
        entries.push(`${JSON.stringify(id)}:{"found":false,"result":{"tx_id":${JSON.stringify(id)}}}`);
      }
      if (clientHasVersion(request, reply, digestTag(versions))) return sendNotModified(reply);
      return jsonAnswer<TransactionList>(reply, `{${entries.join(',')}}`);
    },
  );

  app.get(
    '/extended/v1/tx/:tx_id',
    {
      schema: {
        operationId: 'get_transaction_by_id',
        summary: 'Get transaction',
        description:
          'A mined transaction with a page of its events, else the mempool transaction (pending or dropped). ' +
          'An id without `0x` is redirected to the prefixed path.',
        tags: ['Transactions'],
        params: Type.Object({
          tx_id: TxIdParam,
        }),
        querystring: Type.Object(TxQuery),
        response: {
          200: Type.Union([Transaction, MempoolTransaction]),
          ...errorResponses,
        },
      },
      ...keptTxs,
    },
    async (request, reply) => {
      const { tx_id: given } = request.params;
      if (!given.startsWith('0x')) {
        const search = request.url.indexOf('?');
        return reply.redirect(`/extended/v1/tx/0x${given}${search >= 0 ? request.url.slice(search) : ''}`);
      }
      const id = given.toLowerCase();
      const query = request.query;
      const options = renderOptions(query);
      // A tx rendered earlier with the default query: sent again if its row is still the visible one.
      const keep = isDefaultQuery(query);
      const cache = txByIdJsonCache(store);
      const kept = keep ? cache.get(id) : undefined;
      if (kept) {
        const now = await readMinedTxVersion(id, { unanchored: query.unanchored });
        if (
          now &&
          now.index_block_hash === kept.index_block_hash &&
          now.microblock_hash === kept.microblock_hash &&
          now.status === kept.status
        ) {
          // the same row as when kept, so the same tag: computed once per entry
          const tag = (kept.etag ??= digestTag([txVersion({ kind: 'mined', row: { tx_id: id, ...now } })]));
          if (clientHasVersion(request, reply, tag)) return sendNotModified(reply);
          return jsonAnswer<Transaction>(reply, kept.json);
        }
      }
      // The common case, a mined tx, is one query; the tag comes from the row read.
      const mined = await readMinedTx(id, { unanchored: query.unanchored }, eventPage(query));
      if (mined) {
        if (clientHasVersion(request, reply, digestTag([txVersion({ kind: 'mined', row: mined })]))) {
          return sendNotModified(reply);
        }
        const json = serializeWith(reply, Transaction, minedTransaction(mined, options));
        if (keep) cache.set(mined, json);
        return jsonAnswer<Transaction>(reply, json);
      }
      const pending = await findMempoolTx(store.sql, id, { unanchored: query.unanchored });
      if (pending) {
        keptAnswerReadsMempool(request);
        if (clientHasVersion(request, reply, digestTag([txVersion({ kind: 'mempool', row: pending })]))) {
          return sendNotModified(reply);
        }
        return jsonAnswer<MempoolTransaction>(
          reply,
          serializeWith(reply, MempoolTransaction, mempoolTransaction(pending, options)),
        );
      }
      throw new NotFoundError('could not find transaction by ID');
    },
  );
};
