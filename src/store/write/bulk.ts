import type { TransactionSql } from '../db.js';

export type ColumnType = 'text' | 'int2' | 'int4' | 'int8' | 'numeric' | 'bool' | 'jsonb';

/** A table's columns for bulk insert, in insert order. */
export type ColumnSpec<Row> = readonly (readonly [keyof Row & string, ColumnType])[];

/**
 * `sql.unsafe` does not prepare unless told: the statement would be parsed and described anew each time,
 * and the describe waits for the server's answer, so the statements after it could not be pipelined.
 */
export const PREPARED = { prepare: true } as const;

/**
 * Element type of each column's array parameter. Given explicitly: postgres.js would otherwise infer it from
 * the array's first element, so a column whose first value is sometimes null gives the statement another
 * signature, prepared anew (one more round trip, and the pipeline stalls) for every such combination.
 */
const ELEMENT_OID: Record<ColumnType, number> = {
  text: 25,
  int2: 21,
  int4: 23,
  int8: 20,
  numeric: 1700,
  bool: 16,
  // sent as text, cast to jsonb in the statement
  jsonb: 25,
};

/**
 * Inserts many rows in one statement: one array parameter per column, expanded by unnest. The statement
 * text depends only on the table and columns, so it is prepared once per connection whatever the row count.
 * The statement is sent at once (see `sendAll`): it need not be awaited before the next one is sent.
 */
export function bulkInsert<Row extends object>(
  sql: TransactionSql,
  table: string,
  columns: ColumnSpec<Row>,
  rows: readonly Row[],
  onConflict = '',
): Promise<unknown> {
  if (rows.length === 0) return Promise.resolve();
  return sql
    .unsafe(insertStatement(table, columns, onConflict), columnArrays(sql, columns, rows), PREPARED)
    .execute();
}

/** One array per column (the parameters of an unnest insert), NUL-free text and json. */
export function columnArrays<Row extends object>(
  sql: TransactionSql,
  columns: ColumnSpec<Row>,
  rows: readonly Row[],
): never[] {
  const params = columns.map(([name, type]) => {
    const values = new Array<unknown>(rows.length);
    for (let i = 0; i < rows.length; i++) {
      const value = (rows[i] as Record<string, unknown>)[name];
      values[i] =
        value === undefined || value === null
          ? null
          : type === 'jsonb'
            ? jsonWithoutNul(value)
            : type === 'text'
              ? withoutNul(value as string)
              : value;
    }
    return sql.array(values as never[], ELEMENT_OID[type]);
  });
  return params as never[];
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

/** `INSERT INTO table (columns) SELECT ... FROM unnest($1::type[], ...)`, built once per table and columns. */
export function insertStatement<Row>(table: string, columns: ColumnSpec<Row>, onConflict: string): string {
  const key = `${table}|${columns.map(([name]) => name).join(',')}|${onConflict}`;
  let text = statements.get(key);
  if (!text) {
    const names = columns.map(([name]) => name);
    const arrays = columns.map(([, type], i) => `$${i + 1}::${type === 'jsonb' ? 'text' : type}[]`);
    const selects = columns.map(([name, type]) => (type === 'jsonb' ? `${name}::jsonb` : name));
    text =
      `INSERT INTO ${table} (${names.join(', ')}) ` +
      `SELECT ${selects.join(', ')} FROM unnest(${arrays.join(', ')}) AS u(${names.join(', ')}) ${onConflict}`;
    statements.set(key, text);
  }
  return text;
}
