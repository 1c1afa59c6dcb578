import type { TransactionSql } from '../db.js';
import { PREPARED } from '../statement.js';
import type { ColumnSpec, ColumnType } from '../schema/tables.js';
import { withOnePlan } from './plans.js';

export { PREPARED };

/**
 * Inserts many rows, ROWS_PER_STATEMENT at a time: one array parameter per column, expanded by unnest. The
 * statement text depends only on the table and columns, so it is prepared once per connection whatever the
 * row count. The first statement is sent at once (see `sendAll`): it need not be awaited before the next
 * insert is sent.
 */
export function bulkInsert<Row extends object>(
  sql: TransactionSql,
  table: string,
  columns: ColumnSpec<Row>,
  rows: readonly Row[],
  onConflict = '',
  encoded?: EncodedStatements,
): Promise<unknown> {
  const text = insertStatement(table, columns, onConflict);
  // one plan whatever the rows (store/write/plans.ts)
  return inStatementsOfBoundedSize(sql, rows, (chunk, statement) =>
    withOnePlan(sql, () =>
      sql
        .unsafe(text, columnArrays(sql, columns, chunk, encodedLiterals(sql, encoded, statement)), PREPARED)
        .execute(),
    ),
  );
}

/**
 * How many rows one insert statement carries at most. A large block's rows go in several statements of the
 * same transaction, each sent once the previous one is done, for two reasons:
 * - PGlite runs each statement on the process's main thread, in one synchronous call: /health and anything
 *   else needing no database waits for it (pglite-wire.ts gives the event loop a turn between calls).
 *   Measured on PGlite (bench/observer-stall.ts, 39.8 MB block of 30,103 txs): one statement per table,
 *   /health waited up to 51 s. 1,000 rows (1.4 MB of txs) took 270-720 ms a statement on the loaded
 *   2-core machine, 250 rows 90-250 ms (bench finding F-pglite-statement-rows).
 * - Only one statement's parameters (the column arrays' text, and postgres.js's copy of it) are held at a
 *   time, instead of the whole block's again beside its rows.
 * On PostgreSQL the statements of a block cost one more round trip each (under a millisecond locally).
 * Sending an insert's statements pipelined instead (4 in flight) was measured no faster (a 9,644-tx block:
 * median 2.0-4.5 s pipelined against 2.0-3.4 s one after another, 6 interleaved rounds; bench finding
 * F-ingest-pipelined-inserts): the block's inserts into its four tables are sent side by side, so the server
 * has work queued anyway.
 */
const ROWS_PER_STATEMENT = 250;

/**
 * Calls `send` for each slice of at most ROWS_PER_STATEMENT rows (or the transaction's own size,
 * `transactionOpened`), in order, each once the previous one is done. The first is sent at once; a later
 * one is sent only while the transaction `sql` is still open: once its callback has settled
 * (`transactionSettled`: it threw and the ROLLBACK follows, or it returned), a statement sent on its
 * connection would run outside it, so the rest is refused instead, and a transaction whose callback returned
 * with such an insert unfinished is rolled back (`Store.transaction`): nothing is half-written.
 */
export function inStatementsOfBoundedSize<Row>(
  sql: TransactionSql,
  rows: readonly Row[],
  send: (chunk: readonly Row[], statement: number) => Promise<unknown>,
): Promise<unknown> {
  const size = rowsPerStatement.get(sql) ?? ROWS_PER_STATEMENT;
  if (rows.length === 0) return Promise.resolve();
  if (rows.length <= size) return send(rows, 0);
  return sendInTurn(sql, send(rows.slice(0, size), 0), async () => {
    for (let start = size; start < rows.length; start += size) {
      if (settledTransactions.has(sql)) {
        throw new Error(`the transaction ended with ${rows.length - start} rows of an insert not sent`);
      }
      await send(rows.slice(start, start + size), start / size);
    }
  });
}

/**
 * Sends a statement once `before` (e.g. an insert cut into statements) is done, refused as the later
 * statements of an insert are (`inStatementsOfBoundedSize`) if the transaction's callback has settled by then.
 */
export function sendAfter(
  sql: TransactionSql,
  before: Promise<unknown>,
  send: () => Promise<unknown>,
): Promise<unknown> {
  return sendInTurn(sql, before, () => {
    if (settledTransactions.has(sql)) throw new Error('the transaction ended before a statement was sent');
    return send();
  });
}

/** Runs `rest` once `first` is done, counted among the transaction's unfinished inserts meanwhile. */
function sendInTurn(
  sql: TransactionSql,
  first: Promise<unknown>,
  rest: () => Promise<unknown>,
): Promise<unknown> {
  const all = (async () => {
    await first;
    await rest();
  })();
  let pending = unfinishedInserts.get(sql);
  if (!pending) unfinishedInserts.set(sql, (pending = new Set()));
  pending.add(all);
  const done = () => pending.delete(all);
  all.then(done, done);
  return all;
}

/**
 * Whether an insert of `rowCount` rows goes in several statements in this transaction. Its later statements
 * are sent only as the earlier ones are answered, so a statement sent meanwhile runs before them: one that
 * reads the table (the same-nonce resolution reads `txs` and `mempool_txs`) must then wait for the insert.
 */
export function cutIntoStatements(sql: TransactionSql, rowCount: number): boolean {
  return rowCount > (rowsPerStatement.get(sql) ?? ROWS_PER_STATEMENT);
}

const settledTransactions = new WeakSet<TransactionSql>();
const unfinishedInserts = new WeakMap<TransactionSql, Set<Promise<unknown>>>();
const rowsPerStatement = new WeakMap<TransactionSql, number>();

/**
 * Called by `Store.transaction` when a transaction opens, with the store's `rowsPerStatement` (a test
 * switch: the same rows cut at another size must give the same tables).
 */
export function transactionOpened(sql: TransactionSql, rows: number | undefined): void {
  if (rows !== undefined) rowsPerStatement.set(sql, rows);
}

/**
 * Called by `Store.transaction` when the transaction's callback has settled, before COMMIT or ROLLBACK.
 * Returns how many bulk inserts were still being sent (their remaining statements are refused).
 */
export function transactionSettled(sql: TransactionSql): number {
  settledTransactions.add(sql);
  return unfinishedInserts.get(sql)?.size ?? 0;
}

/**
 * Array type of each column's parameter. Given explicitly: inferred from the values, a column whose first
 * value is sometimes null would give the statement another signature, prepared anew (one more round trip,
 * and the pipeline stalls) for every such combination. jsonb travels as text, cast in the statement.
 */
const ARRAY_OID: Record<ColumnType, number> = {
  text: 1009,
  int2: 1005,
  int4: 1007,
  int8: 1016,
  numeric: 1231,
  bool: 1000,
  jsonb: 1009,
};

/**
 * One array per column (the parameters of an unnest insert), NUL-free text and json. Each array is sent as
 * its text literal, built here in one pass: postgres.js's own array serializer runs two regular-expression
 * replacements over every element (hex and JSON of a block's txs are megabytes), and only text elements
 * holding a quote or a backslash need escaping. Numbers and booleans need no quotes.
 */
export function columnArrays<Row extends object>(
  sql: TransactionSql,
  columns: ColumnSpec<Row>,
  rows: readonly Row[],
  encoded?: ReadonlyMap<string, string>,
): never[] {
  const params = columns.map(([name, type]) =>
    sql.typed(encoded?.get(name) ?? columnLiteral(rows, name, type), ARRAY_OID[type]),
  );
  return params as never[];
}

/**
 * One column of `rows` as an array literal (see `columnArrays`): the one place it is built. Its elements are
 * joined once into a flat string: a literal grown by `+=` is a rope of a thousand pieces, which postgres.js
 * flattens in `Buffer.byteLength` before copying it out as UTF-8, and whose pieces live (and are copied out
 * of the young generation) until the statement is sent. Measured on the 100-block bench chain (19,329 txs,
 * a block's txs, events and principal rows, built then measured as postgres.js's Bind does): 17-18 µs per tx
 * to build + 6-7 to measure and copy with `+=`, 12-14 + 1-2 joined.
 */
function columnLiteral(rows: readonly object[], name: string, type: ColumnType): string {
  const elements = new Array<string>(rows.length);
  for (let i = 0; i < rows.length; i++) {
    const value = (rows[i] as Record<string, unknown>)[name];
    if (value === undefined || value === null) elements[i] = 'NULL';
    else if (type === 'text') elements[i] = quoteElement(withoutNul(value as string));
    else if (type === 'jsonb') elements[i] = quotedJson(jsonWithoutNul(value));
    else if (type === 'bool') elements[i] = value ? 't' : 'f';
    else elements[i] = String(value as number | string);
  }
  if (rows.length === 0) return '{}';
  // the braces go on the end elements, so that the join's result is the literal itself, flat (a `'{' + ... +
  // '}'` around it would be a rope again, copied once more when postgres.js flattens it)
  elements[0] = '{' + elements[0];
  elements[rows.length - 1] += '}';
  return elements.join(',');
}

/**
 * An insert's column literals built ahead, before its transaction opens (a block's rows, while the database
 * still applies the message before it: ingest/ingestor.ts `prepare`), one map per statement as
 * `inStatementsOfBoundedSize` will cut the rows. Whoever changes a column of the rows afterwards forgets
 * its literals (`forgetColumn`); a column without a literal is built from the rows when the statement is
 * sent, as it would be without this. Measured: building the literals was 420 ms of the indexer's 7.2 s of
 * busy time replaying 100 blocks of 200 txs (`node --cpu-prof`), spent inside the message's transaction
 * while the database waited for it.
 */
export interface EncodedStatements {
  rowsPerStatement: number;
  literals: Map<string, string>[];
}

export function encodeStatements<Row extends object>(
  columns: ColumnSpec<Row>,
  rows: readonly Row[],
  rowsPerStatementAhead: number,
): EncodedStatements {
  const literals: Map<string, string>[] = [];
  for (let start = 0; start < rows.length; start += rowsPerStatementAhead) {
    const chunk = rows.slice(start, start + rowsPerStatementAhead);
    literals.push(new Map(columns.map(([name, type]) => [name, columnLiteral(chunk, name, type)])));
  }
  return { rowsPerStatement: rowsPerStatementAhead, literals };
}

/** The rows' column `name` changed since its literals were built: they are built again when sent. */
export function forgetColumn(encoded: EncodedStatements | undefined, name: string): void {
  for (const literals of encoded?.literals ?? []) literals.delete(name);
}

/** The literals built ahead for statement number `statement`, if the transaction cuts the rows as they were cut. */
export function encodedLiterals(
  sql: TransactionSql,
  encoded: EncodedStatements | undefined,
  statement: number,
): ReadonlyMap<string, string> | undefined {
  if (!encoded || encoded.rowsPerStatement !== (rowsPerStatement.get(sql) ?? ROWS_PER_STATEMENT))
    return undefined;
  return encoded.literals[statement];
}

/** How many rows a statement carries in transactions of a store with this `rowsPerStatement` option. */
export function statementSize(rowsPerStatementOption: number | undefined): number {
  return rowsPerStatementOption ?? ROWS_PER_STATEMENT;
}

/**
 * An array element in double quotes, its quotes and backslashes escaped. Searched for as strings, not with a
 * regular expression: a tx's hex and JSON columns (every JSON text holds quotes) took 8-10 µs per tx to
 * escape with `replace(/["\\]/g, ...)`, 4-5 with `replaceAll` (100 blocks of 200 txs), and `includes` scans a
 * hex string several times faster than a regular expression's test.
 */
function quoteElement(text: string): string {
  let escaped = text.includes('\\') ? text.replaceAll('\\', '\\\\') : text;
  if (escaped.includes('"')) escaped = escaped.replaceAll('"', '\\"');
  return '"' + escaped + '"';
}

/**
 * A JSON text as an array element: what `quoteElement` gives, in one native pass instead of a scan and a
 * copy per character escaped (every JSON text holds quotes). A JSON text from `JSON.stringify` holds no
 * control character and no lone surrogate (it escapes them), so stringifying it again escapes exactly its
 * quotes and backslashes, each with a backslash, and wraps it in double quotes: the array literal's quoting.
 * (test/store/bulk-statements.test.ts stores texts with quotes, backslashes, escapes and non-ASCII and
 * reads them back.) Measured: 2.1-3.3 µs per text against 18-21 with `quoteElement` (20,000 tx payloads of
 * ~300 characters, on the loaded 2-core machine).
 */
function quotedJson(json: string): string {
  return JSON.stringify(json);
}

/**
 * Waits for statements already sent. Inside a transaction postgres.js writes each statement to the
 * connection as soon as it is executed, without waiting for the previous answer (pipelining), so statements
 * that do not need each other's results cost one round trip together. The server still runs them one after
 * another in the order sent; the first error fails the transaction and is thrown here.
 */
export async function sendAll(statements: readonly PromiseLike<unknown>[]): Promise<void> {
  await Promise.all(statements);
}

/** PostgreSQL text and jsonb cannot hold NUL; the original API drops it too (e.g. from `vm_error`). */
function withoutNul(text: string): string {
  return text.includes('\u0000') ? text.replaceAll('\u0000', '') : text;
}

function jsonWithoutNul(value: unknown): string {
  const json = JSON.stringify(value);
  if (!json.includes('\\u0000')) return json;
  return JSON.stringify(value, (_key, v: unknown) => (typeof v === 'string' ? withoutNul(v) : v));
}

const statements = new Map<string, string>();

/**
 * The select list that turns one array parameter per column ($first, $first+1, ... in `columns`' order)
 * into rows: `unnest($1::text[]) AS name, ...`, one set-returning call per column in the select list, which
 * PostgreSQL runs in step (a ProjectSet node: the arrays' elements side by side, one row each, as
 * `unnest(a, b, ...)` in FROM gives for arrays of one length, which the columns of a statement's rows are).
 * Not `SELECT * FROM unnest(a, b, ...)`: in FROM it is `ROWS FROM (unnest(a), unnest(b), ...)`, and a
 * function scan first copies every function's whole result into its own tuplestore, then reads each row
 * back from all of them; in the select list each element is passed on as it is read from its array.
 * Measured on a 30-column insert of 200 rows a statement: 21.5-22.0 -> 18.5-19.5 µs of backend CPU per row
 * (4 interleaved rounds); on ingest, bench finding F-ingest-unnest-select-list. jsonb travels as text and
 * is cast here.
 */
export function unnestSelectList<Row>(columns: ColumnSpec<Row>, first = 1): string {
  return columns
    .map(([name, type], i) => {
      const element = `unnest($${first + i}::${type === 'jsonb' ? 'text' : type}[])`;
      return `${type === 'jsonb' ? `${element}::jsonb` : element} AS ${name}`;
    })
    .join(', ');
}

/** `INSERT INTO table (columns) SELECT unnest($1::type[]) AS ..., ...`, built once per table and columns. */
function insertStatement<Row>(table: string, columns: ColumnSpec<Row>, onConflict: string): string {
  const key = `${table}|${columns.map(([name]) => name).join(',')}|${onConflict}`;
  let text = statements.get(key);
  if (!text) {
    const names = columns.map(([name]) => name);
    text = `INSERT INTO ${table} (${names.join(', ')}) SELECT ${unnestSelectList(columns)} ${onConflict}`;
    statements.set(key, text);
  }
  return text;
}
