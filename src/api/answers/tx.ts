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
import type { Store } from '../../store/store.js';
import { AnswerCache } from '../cache/answer-cache.js';
import { txByIdRenderings } from '../cache/rendered-txs.js';
import { mempoolTransaction, minedTransaction, type RenderOptions } from '../render/txs.js';
import { serializerOf } from '../render/serializer.js';
import { EVENT_LIMIT_DEFAULT } from '../schemas/params.js';
import { MempoolTransaction, Transaction } from '../schemas/transactions.js';
import { holds, jsonAnswer, notModified, redirect, type Answer, type Asked } from './answer.js';
import { digestTag, tipState } from './tags.js';

// GET /extended/v1/tx/:tx_id and /extended/v1/tx/multiple.
//
// Caches (docs/caching.md): each route's whole answers (below), used while the chain state they were made under
// stays: a mined tx's answer changes only when the tip or its microblock does (a reorg, a microblock orphaned or
// confirmed), an answer that shows the mempool (a mempool tx, an id not found) also with the mempool version.
// Each carries the ETag of the rows it was read from. Bound: the default 8 MB per route (~2,300 answers of a tx
// with its first 20 events): the txs asked for more than once between two chain-state changes (cached on the
// second ask, so a walk over the history caches nothing and displaces nothing). Past it, or after a change, a tx
// asked again costs one primary-key read of its row's key: its rendering is cached across tips by the tx-by-id
// renderings (cache/rendered-txs.ts). The chain state comes from its cache (store/read/chain-state.ts).
//
// Reads: a tx read by id, and the key of a tx's visible row (read to validate a cached rendering), are batched:
// those of requests arriving together are one statement each (store/read/batched.ts).

const FILE = 'src/api/answers/tx.ts';

export interface TxQuery {
  event_limit: number;
  event_offset: number;
  unanchored: boolean;
  exclude_function_args: boolean;
}

function eventPage(query: TxQuery): EventPage {
  return { offset: query.event_offset, limit: query.event_limit || EVENT_LIMIT_DEFAULT };
}

function renderOptions(query: TxQuery): RenderOptions {
  return { excludeFunctionArgs: query.exclude_function_args };
}

/** The query whose renderings are cached (see cache/rendered-txs.ts): the first page of 20 events, args included. */
function isDefaultQuery(query: TxQuery): boolean {
  return (
    query.event_offset === 0 &&
    (query.event_limit || EVENT_LIMIT_DEFAULT) === EVENT_LIMIT_DEFAULT &&
    !query.exclude_function_args
  );
}

type MinedVersionFields = Pick<MinedTxRecord, 'tx_id' | 'index_block_hash' | 'microblock_hash' | 'status'>;

/** What a client's copy of a tx depends on: where it is mined, or its mempool state (a part of its tag). */
function txVersion(
  tx: { kind: 'mined'; row: MinedVersionFields } | { kind: 'mempool'; row: MempoolTxRecord },
) {
  const r = tx.row;
  return tx.kind === 'mined'
    ? `${r.tx_id}:${tx.row.index_block_hash}:${tx.row.microblock_hash}:${r.status}`
    : `${r.tx_id}:mempool:${r.status}:${tx.row.receipt_time}:${tx.row.replaced_by_tx_id ?? ''}`;
}

// Transactions are written by the compiled serializer of their own schema (mined or mempool), which drops
// unknown keys and keeps upstream's key order; choosing the schema here avoids an `anyOf` match per answer.
const writeMined = serializerOf(Transaction);
const writeMempool = serializerOf(MempoolTransaction);

// eslint-disable-next-line max-lines-per-function -- a factory: the caches of the resource and the answer functions sharing them, each under 80 lines
export function txAnswers(store: Store) {
  const byIdAnswers = new AnswerCache({
    name: 'answers: tx by id',
    file: FILE,
    state: tipState(store),
    showsMempool: 'some answers',
    cacheOnSecondAsk: true,
  });
  const listAnswers = new AnswerCache({
    name: 'answers: tx/multiple',
    file: FILE,
    state: tipState(store),
    showsMempool: 'some answers',
    cacheOnSecondAsk: true,
  });
  const renderings = txByIdRenderings(store);
  const readMinedTx = batchedMinedTxReads(() => store.sql);
  const readMinedTxVersion = batchedMinedTxVersionReads(() => store.sql);

  /** A mined tx, else a mempool tx (pending or dropped); an id without `0x` is redirected to the prefixed path. */
  async function txById(asked: Asked, given: string, query: TxQuery): Promise<Answer> {
    if (!given.startsWith('0x')) {
      const search = asked.url.indexOf('?');
      return redirect(`/extended/v1/tx/0x${given}${search >= 0 ? asked.url.slice(search) : ''}`);
    }
    const id = given.toLowerCase();
    const visibility = { unanchored: query.unanchored };
    // A tx rendered earlier with the default query: sent again if its row is still the visible one.
    const cacheable = isDefaultQuery(query);
    const rendered = cacheable ? renderings.get(id) : undefined;
    if (rendered) {
      const now = await readMinedTxVersion(id, visibility);
      if (
        now &&
        now.index_block_hash === rendered.index_block_hash &&
        now.microblock_hash === rendered.microblock_hash &&
        now.status === rendered.status
      ) {
        // the same row as when rendered, so the same tag: computed once per entry
        rendered.etag ??= digestTag([txVersion({ kind: 'mined', row: { tx_id: id, ...now } })]);
        return jsonAnswer(rendered.json, rendered.etag);
      }
    }
    // The common case, a mined tx, is one query; the tag comes from the row read.
    const mined = await readMinedTx(id, visibility, eventPage(query));
    if (mined) {
      const tag = digestTag([txVersion({ kind: 'mined', row: mined })]);
      if (holds(asked, tag)) return notModified(tag);
      const json = writeMined(minedTransaction(mined, renderOptions(query)));
      if (cacheable) renderings.set(mined, json);
      return jsonAnswer(json, tag);
    }
    const pending = await findMempoolTx(store.sql, id, visibility);
    if (pending) {
      const tag = digestTag([txVersion({ kind: 'mempool', row: pending })]);
      if (holds(asked, tag)) return notModified(tag);
      return jsonAnswer(writeMempool(mempoolTransaction(pending, renderOptions(query))), tag, true);
    }
    throw new NotFoundError('could not find transaction by ID');
  }

  /**
   * Mined or mempool txs by id: upstream's order, mined txs, then mempool txs, then the ids not found (each in
   * request order). The body is spliced by hand (cached renderings are JSON text);
   * test/api/tx-multiple-serialized.test.ts proves it is byte for byte what the route's 200 schema's serializer
   * makes of the same answer, for every tx of recorded chains and each query.
   */
  async function txList(given: string[], query: TxQuery): Promise<Answer> {
    const ids: string[] = [];
    for (const id of given.map((g) => g.toLowerCase())) if (!ids.includes(id)) ids.push(id);
    const visibility = { unanchored: query.unanchored };
    // txs rendered earlier with the default query whose row is still the visible one: not read again
    const cacheable = isDefaultQuery(query);
    const rendered = new Map<string, { version: MinedVersionFields; json: string }>();
    const withRendering = cacheable ? ids.filter((id) => renderings.get(id) !== undefined) : [];
    for (const now of await findMinedTxVersions(store.sql, withRendering, visibility)) {
      const entry = renderings.get(now.tx_id);
      if (entry?.index_block_hash === now.index_block_hash && entry.microblock_hash === now.microblock_hash) {
        rendered.set(now.tx_id, { version: now, json: entry.json });
      }
    }
    const toRead = ids.filter((id) => !rendered.has(id));
    const mined = new Map(
      (await findMinedTxs(store.sql, toRead, visibility, eventPage(query))).map((t) => [t.tx_id, t]),
    );
    const rest = toRead.filter((id) => !mined.has(id));
    const pending = new Map((await findMempoolTxs(store.sql, rest, visibility)).map((t) => [t.tx_id, t]));
    if (rendered.size === 0 && mined.size === 0 && pending.size === 0) {
      throw new NotFoundError('could not find any of the transactions by ID');
    }

    const options = renderOptions(query);
    const entries: string[] = [];
    const versions: string[] = [];
    const found = (id: string, json: string) => `${JSON.stringify(id)}:{"found":true,"result":${json}}`;
    for (const id of ids) {
      const known = rendered.get(id);
      if (known) {
        versions.push(txVersion({ kind: 'mined', row: known.version }));
        entries.push(found(id, known.json));
        continue;
      }
      const tx = mined.get(id);
      if (!tx) continue;
      versions.push(txVersion({ kind: 'mined', row: tx }));
      const json = writeMined(minedTransaction(tx, options));
      if (cacheable) renderings.set(tx, json);
      entries.push(found(id, json));
    }
    // a mempool tx, and an id found nowhere (it may arrive in the mempool), make the answer show the mempool
    let readsMempool = false;
    for (const id of ids) {
      const tx = pending.get(id);
      if (!tx) continue;
      readsMempool = true;
      versions.push(txVersion({ kind: 'mempool', row: tx }));
      entries.push(found(id, writeMempool(mempoolTransaction(tx, options))));
    }
    for (const id of ids) {
      if (rendered.has(id) || mined.has(id) || pending.has(id)) continue;
      readsMempool = true;
      versions.push(`${id}:none`);
      entries.push(`${JSON.stringify(id)}:{"found":false,"result":{"tx_id":${JSON.stringify(id)}}}`);
    }
    return jsonAnswer(`{${entries.join(',')}}`, digestTag(versions), readsMempool);
  }

  return {
    caches: { byId: byIdAnswers, list: listAnswers },
    txById: (asked: Asked, id: string, query: TxQuery) => byIdAnswers.made(() => txById(asked, id, query)),
    txList: (ids: string[], query: TxQuery) => listAnswers.made(() => txList(ids, query)),
  };
}
