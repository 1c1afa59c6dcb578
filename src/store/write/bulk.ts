import type { TransactionSql } from '../db.js';

export type ColumnType = 'text' | 'int2' | 'int4' | 'int8' | 'numeric' | 'bool' | 'jsonb';

/** A table's columns for bulk insert, in insert order. */
export type ColumnSpec<Row> = readonly (readonly [keyof Row & string, ColumnType])[];

const BOOL_OID = 16;

/**
 * Inserts many rows in one statement: one array parameter per column, expanded by unnest. The statement
 * text depends only on the table and columns, so it is prepared once per connection whatever the row count.
 */
export async function bulkInsert<Row extends object>(
  sql: TransactionSql,
  table: string,
  columns: ColumnSpec<Row>,
  rows: readonly Row[],
  onConflict = '',
): Promise<void> {
  if (rows.length === 0) return;
  const names = columns.map(([name]) => name);
  const params = columns.map(([name, type]) => {
    const values = rows.map((row) => {
      const value = (row as Record<string, unknown>)[name];
      if (value === undefined || value === null) return null;
      if (type === 'jsonb') return jsonWithoutNul(value);
      return type === 'text' ? withoutNul(value as string) : value;
    });
    return type === 'bool' ? sql.array(values as boolean[], BOOL_OID) : values;
  });
  await sql.unsafe(insertStatement(table, columns, onConflict, names), params as never[]);
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

function insertStatement<Row>(table: string, columns: ColumnSpec<Row>, onConflict: string, names: string[]) {
  const key = `${table}|${names.join(',')}|${onConflict}`;
  let text = statements.get(key);
  if (!text) {
    const arrays = columns.map(([, type], i) => `$${i + 1}::${type === 'jsonb' ? 'text' : type}[]`);
    const selects = columns.map(([name, type]) => (type === 'jsonb' ? `${name}::jsonb` : name));
    text =
      `INSERT INTO ${table} (${names.join(', ')}) ` +
      `SELECT ${selects.join(', ')} FROM unnest(${arrays.join(', ')}) AS u(${names.join(', ')}) ${onConflict}`;
    statements.set(key, text);
  }
  return text;
}
