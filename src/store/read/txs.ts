import type { Sql } from '../db.js';
import type { Visibility } from './visibility.js';

const MEMPOOL_PENDING = 0;
const MAX_INT = 2_147_483_647;

// Reads of transactions: mined rows (with their events, page by page) and mempool rows.

/** The decoded columns mined and mempool rows share. */
interface DecodedTxRecord {
  tx_id: string;
  type_id: number;
  nonce: number;
  fee_rate: string;
  sender_address: string;
  sponsored: boolean;
  sponsor_address: string | null;
  sponsor_nonce: number | null;
  anchor_mode: number;
  post_condition_mode: number;
  post_conditions: unknown[];
  payload: Record<string, unknown>;
  /** For contract calls: the called function's entry of the contract ABI, when the contract is known. */
  function_abi: unknown;
}

export interface MinedTxRecord extends DecodedTxRecord {
  index_block_hash: string;
  microblock_hash: string;
  block_hash: string;
  block_height: number;
  block_time: number;
  burn_block_time: number;
  burn_block_height: number;
  parent_burn_block_time: number;
  parent_block_hash: string;
  tx_index: number;
  microblock_sequence: number;
  canonical: boolean;
  microblock_canonical: boolean;
  status: number;
  raw_result: string;
  result_repr: string;
  vm_error: string | null;
  event_count: number;
  execution_cost_read_count: number;
  execution_cost_read_length: number;
  execution_cost_runtime: number;
  execution_cost_write_count: number;
  execution_cost_write_length: number;
  /** The requested page of the tx's events (empty when none was asked). */
  events: EventRecord[];
}

export interface MempoolTxRecord extends DecodedTxRecord {
  status: number;
  replaced_by_tx_id: string | null;
  receipt_time: number;
}

export interface EventRecord {
  event_index: number;
  kind: number;
  asset_event_type: number | null;
  sender: string | null;
  recipient: string | null;
  amount: string | null;
  asset_identifier: string | null;
  value: string | null;
  value_repr: string | null;
  memo: string | null;
  contract_id: string | null;
  topic: string | null;
  locked_address: string | null;
  unlock_height: number | null;
}

/** Events with `event_offset <= event_index < event_offset + event_limit` (upstream pages by index). */
export interface EventPage {
  offset: number;
  limit: number;
}

const decodedColumns = (sql: Sql, alias: string) =>
  sql`${sql(
    [
      'tx_id',
      'type_id',
      'nonce',
      'fee_rate',
      'sender_address',
      'sponsored',
      'sponsor_address',
      'sponsor_nonce',
      'anchor_mode',
      'post_condition_mode',
      'post_conditions',
      'payload',
    ].map((c) => `${alias}.${c}`),
  )}`;

/** The called function's ABI entry, from the contract's deployment (canonical preferred). */
const functionAbi = (sql: Sql, alias: string) => sql`
  (SELECT jsonb_path_query_first(s.abi, '$.functions[*] ? (@.name == $name)',
      jsonb_build_object('name', ${sql(`${alias}.payload`)} -> 'contract_call' ->> 'function_name'))
    FROM smart_contracts s
    WHERE s.contract_id = ${sql(`${alias}.contract_call_contract_id`)} AND s.abi IS NOT NULL
    ORDER BY s.canonical DESC, s.block_height DESC LIMIT 1) AS function_abi`;

/** First event_index past the page (capped: the column is an integer). */
const eventPageEnd = (page: EventPage) => Math.min(page.offset + page.limit, MAX_INT);

const eventsOf = (sql: Sql, alias: string, page: EventPage | null) =>
  page === null || page.limit <= 0
    ? sql`'[]'::json AS events`
    : sql`
  (SELECT coalesce(json_agg(json_build_object(
      'event_index', e.event_index, 'kind', e.kind, 'asset_event_type', e.asset_event_type,
      'sender', e.sender, 'recipient', e.recipient, 'amount', e.amount::text,
      'asset_identifier', e.asset_identifier, 'value', e.value, 'value_repr', e.value_repr, 'memo', e.memo,
      'contract_id', e.contract_id, 'topic', e.topic, 'locked_address', e.locked_address,
      'unlock_height', e.unlock_height) ORDER BY e.event_index), '[]'::json)
    FROM events e
    WHERE e.tx_id = ${sql(`${alias}.tx_id`)} AND e.index_block_hash = ${sql(`${alias}.index_block_hash`)}
      AND e.microblock_hash = ${sql(`${alias}.microblock_hash`)}
      AND e.event_index >= ${page.offset}
      AND e.event_index < ${eventPageEnd(page)}) AS events`;

const minedColumns = (sql: Sql, page: EventPage | null) => sql`
  ${decodedColumns(sql, 't')}, t.index_block_hash, t.microblock_hash, t.block_hash, t.block_height,
  t.block_time, t.burn_block_time, t.burn_block_height, t.parent_burn_block_time, t.parent_block_hash,
  t.tx_index, t.microblock_sequence, t.canonical, t.microblock_canonical, t.status, t.raw_result,
  t.result_repr, t.vm_error, t.event_count, t.execution_cost_read_count, t.execution_cost_read_length,
  t.execution_cost_runtime, t.execution_cost_write_count, t.execution_cost_write_length,
  ${functionAbi(sql, 't')}, ${eventsOf(sql, 't', page)}`;

/**
 * The visible mined rows of these tx ids (at most one per id), with a page of their events: one flat
 * statement, as `findMinedTx` (composing it from fragments cost ~100 µs of client CPU per call). The
 * visibility condition is `visible()`'s, inlined with a parameter; no page reads no events.
 */
export async function findMinedTxs(
  sql: Sql,
  txIds: string[],
  visibility: Visibility,
  page: EventPage | null,
): Promise<MinedTxRecord[]> {
  if (txIds.length === 0) return [];
  const events =
    page === null || page.limit <= 0
      ? { offset: 0, end: 0 }
      : { offset: page.offset, end: eventPageEnd(page) };
  return sql<MinedTxRecord[]>`
    SELECT t.tx_id, t.type_id, t.nonce, t.fee_rate, t.sender_address, t.sponsored, t.sponsor_address,
      t.sponsor_nonce, t.anchor_mode, t.post_condition_mode, t.post_conditions, t.payload, t.index_block_hash,
      t.microblock_hash, t.block_hash, t.block_height, t.block_time, t.burn_block_time, t.burn_block_height,
      t.parent_burn_block_time, t.parent_block_hash, t.tx_index, t.microblock_sequence, t.canonical,
      t.microblock_canonical, t.status, t.raw_result, t.result_repr, t.vm_error, t.event_count,
      t.execution_cost_read_count, t.execution_cost_read_length, t.execution_cost_runtime,
      t.execution_cost_write_count, t.execution_cost_write_length,
      (SELECT jsonb_path_query_first(s.abi, '$.functions[*] ? (@.name == $name)',
          jsonb_build_object('name', t.payload -> 'contract_call' ->> 'function_name'))
        FROM smart_contracts s
        WHERE s.contract_id = t.contract_call_contract_id AND s.abi IS NOT NULL
        ORDER BY s.canonical DESC, s.block_height DESC LIMIT 1) AS function_abi,
      (SELECT coalesce(json_agg(json_build_object(
          'event_index', e.event_index, 'kind', e.kind, 'asset_event_type', e.asset_event_type,
          'sender', e.sender, 'recipient', e.recipient, 'amount', e.amount::text,
          'asset_identifier', e.asset_identifier, 'value', e.value, 'value_repr', e.value_repr, 'memo', e.memo,
          'contract_id', e.contract_id, 'topic', e.topic, 'locked_address', e.locked_address,
          'unlock_height', e.unlock_height) ORDER BY e.event_index), '[]'::json)
        FROM events e
        WHERE e.tx_id = t.tx_id AND e.index_block_hash = t.index_block_hash
          AND e.microblock_hash = t.microblock_hash
          AND e.event_index >= ${events.offset} AND e.event_index < ${events.end}) AS events
    FROM txs t
    WHERE t.tx_id = ANY(${txIds}) AND t.canonical AND t.microblock_canonical
      AND (t.index_block_hash <> '' OR ${visibility.unanchored}::boolean)
      AND t.block_height <= ${visibility.maxHeight ?? MAX_INT}
    ORDER BY t.block_height DESC, t.microblock_sequence DESC, t.tx_index DESC`;
}

/**
 * The visible mined row of one tx id, with a page of its events: the hottest read of the API, written as
 * one flat statement. Composing it from fragments (as the list reads do) cost ~100 µs of client CPU per
 * call in postgres.js, more than PostgreSQL spends executing it; a scalar key and no sort also let
 * PostgreSQL settle on a generic plan instead of planning each call. The visibility condition is
 * `visible()`'s (canonical, canonical microblock, anchored unless `unanchored`), inlined with a
 * parameter. At most one row of a tx id is visible (a tx is mined once on the canonical chain; a
 * microblock's staged rows give way to the confirming block's).
 */
export async function findMinedTx(
  sql: Sql,
  txId: string,
  visibility: Visibility,
  page: EventPage,
): Promise<MinedTxRecord | undefined> {
  const [row] = await sql<MinedTxRecord[]>`
    SELECT t.tx_id, t.type_id, t.nonce, t.fee_rate, t.sender_address, t.sponsored, t.sponsor_address,
      t.sponsor_nonce, t.anchor_mode, t.post_condition_mode, t.post_conditions, t.payload, t.index_block_hash,
      t.microblock_hash, t.block_hash, t.block_height, t.block_time, t.burn_block_time, t.burn_block_height,
      t.parent_burn_block_time, t.parent_block_hash, t.tx_index, t.microblock_sequence, t.canonical,
      t.microblock_canonical, t.status, t.raw_result, t.result_repr, t.vm_error, t.event_count,
      t.execution_cost_read_count, t.execution_cost_read_length, t.execution_cost_runtime,
      t.execution_cost_write_count, t.execution_cost_write_length,
      (SELECT jsonb_path_query_first(s.abi, '$.functions[*] ? (@.name == $name)',
          jsonb_build_object('name', t.payload -> 'contract_call' ->> 'function_name'))
        FROM smart_contracts s
        WHERE s.contract_id = t.contract_call_contract_id AND s.abi IS NOT NULL
        ORDER BY s.canonical DESC, s.block_height DESC LIMIT 1) AS function_abi,
      (SELECT coalesce(json_agg(json_build_object(
          'event_index', e.event_index, 'kind', e.kind, 'asset_event_type', e.asset_event_type,
          'sender', e.sender, 'recipient', e.recipient, 'amount', e.amount::text,
          'asset_identifier', e.asset_identifier, 'value', e.value, 'value_repr', e.value_repr, 'memo', e.memo,
          'contract_id', e.contract_id, 'topic', e.topic, 'locked_address', e.locked_address,
          'unlock_height', e.unlock_height) ORDER BY e.event_index), '[]'::json)
        FROM events e
        WHERE e.tx_id = t.tx_id AND e.index_block_hash = t.index_block_hash
          AND e.microblock_hash = t.microblock_hash
          AND e.event_index >= ${page.offset} AND e.event_index < ${eventPageEnd(page)}) AS events
    FROM txs t
    WHERE t.tx_id = ${txId} AND t.canonical AND t.microblock_canonical
      AND (t.index_block_hash <> '' OR ${visibility.unanchored}::boolean)
    LIMIT 1`;
  return row;
}

/** The key and status of the visible mined row of a tx id (`findMinedTx`'s row), without reading it. */
export interface MinedTxVersion {
  index_block_hash: string;
  microblock_hash: string;
  status: number;
}

/** The key and status of the row `findMinedTx` would read (same condition), or undefined. */
export async function findMinedTxVersion(
  sql: Sql,
  txId: string,
  visibility: Visibility,
): Promise<MinedTxVersion | undefined> {
  const [row] = await sql<MinedTxVersion[]>`
    SELECT t.index_block_hash, t.microblock_hash, t.status
    FROM txs t
    WHERE t.tx_id = ${txId} AND t.canonical AND t.microblock_canonical
      AND (t.index_block_hash <> '' OR ${visibility.unanchored}::boolean)
    LIMIT 1`;
  return row;
}

/** `findMinedTxVersion` for several tx ids (at most one row per id). */
export async function findMinedTxVersions(
  sql: Sql,
  txIds: string[],
  visibility: Visibility,
): Promise<(MinedTxVersion & { tx_id: string })[]> {
  if (txIds.length === 0) return [];
  return sql<(MinedTxVersion & { tx_id: string })[]>`
    SELECT t.tx_id, t.index_block_hash, t.microblock_hash, t.status
    FROM txs t
    WHERE t.tx_id = ANY(${txIds}) AND t.canonical AND t.microblock_canonical
      AND (t.index_block_hash <> '' OR ${visibility.unanchored}::boolean)`;
}

/** Mined rows by their exact keys (as listed by the principal index), with a page of events. */
export async function findMinedTxsByKey(
  sql: Sql,
  keys: { tx_id: string; index_block_hash: string; microblock_hash: string }[],
  page: EventPage | null,
): Promise<MinedTxRecord[]> {
  if (keys.length === 0) return [];
  return sql<MinedTxRecord[]>`
    SELECT ${minedColumns(sql, page)}
    FROM unnest(${keys.map((k) => k.tx_id)}::text[], ${keys.map((k) => k.index_block_hash)}::text[],
      ${keys.map((k) => k.microblock_hash)}::text[]) AS k(tx_id, index_block_hash, microblock_hash)
    JOIN txs t ON t.tx_id = k.tx_id AND t.index_block_hash = k.index_block_hash
      AND t.microblock_hash = k.microblock_hash`;
}

const mempoolColumns = (sql: Sql, lookup: MempoolLookup) => {
  const status = lookup.unanchored
    ? sql`m.status`
    : sql`CASE WHEN m.pruned AND EXISTS (
          SELECT 1 FROM txs u WHERE u.tx_id = m.tx_id AND u.index_block_hash = ''
            AND u.canonical AND u.microblock_canonical)
        THEN ${MEMPOOL_PENDING}::smallint ELSE m.status END AS status`;
  return sql`${decodedColumns(sql, 'm')}, ${status}, m.replaced_by_tx_id, m.receipt_time, ${functionAbi(sql, 'm')}`;
};

export interface MempoolLookup {
  /** Reads that see unconfirmed microblocks (`unanchored=true`) find such txs mined, not in the mempool. */
  unanchored?: boolean;
}

/**
 * Mempool rows of these ids, pending or pruned (pruned rows keep their last status). A pruned row whose
 * tx sits in an unconfirmed microblock shows as pending to anchored reads: it is not confirmed yet
 * (NOTES-upstream A.2).
 */
export async function findMempoolTxs(
  sql: Sql,
  txIds: string[],
  lookup: MempoolLookup = {},
): Promise<MempoolTxRecord[]> {
  if (txIds.length === 0) return [];
  return sql<MempoolTxRecord[]>`
    SELECT ${mempoolColumns(sql, lookup)} FROM mempool_txs m WHERE m.tx_id = ANY(${txIds})`;
}

/** The mempool row of one tx id (see `findMempoolTxs`), one flat statement like `findMinedTx`. */
export async function findMempoolTx(
  sql: Sql,
  txId: string,
  lookup: MempoolLookup = {},
): Promise<MempoolTxRecord | undefined> {
  const [row] = await sql<MempoolTxRecord[]>`
    SELECT m.tx_id, m.type_id, m.nonce, m.fee_rate, m.sender_address, m.sponsored, m.sponsor_address,
      m.sponsor_nonce, m.anchor_mode, m.post_condition_mode, m.post_conditions, m.payload,
      CASE WHEN m.pruned AND NOT ${lookup.unanchored ?? false}::boolean AND EXISTS (
          SELECT 1 FROM txs u WHERE u.tx_id = m.tx_id AND u.index_block_hash = ''
            AND u.canonical AND u.microblock_canonical)
        THEN ${MEMPOOL_PENDING}::smallint ELSE m.status END AS status,
      m.replaced_by_tx_id, m.receipt_time,
      (SELECT jsonb_path_query_first(s.abi, '$.functions[*] ? (@.name == $name)',
          jsonb_build_object('name', m.payload -> 'contract_call' ->> 'function_name'))
        FROM smart_contracts s
        WHERE s.contract_id = m.contract_call_contract_id AND s.abi IS NOT NULL
        ORDER BY s.canonical DESC, s.block_height DESC LIMIT 1) AS function_abi
    FROM mempool_txs m WHERE m.tx_id = ${txId}`;
  return row;
}
