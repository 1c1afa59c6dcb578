import type { Sql, TransactionSql } from './db.js';

/**
 * `sql.unsafe` does not prepare unless told: the statement would be parsed and described anew each time,
 * and the describe waits for the server's answer, so the statements after it could not be pipelined.
 */
export const PREPARED = { prepare: true } as const;

/**
 * A statement whose text is built once, when its module loads, from the store's rules (visibility.ts, the
 * column lists of schema/tables.ts, the codes of schema/codes.ts), and run prepared with positional
 * parameters ($1, $2, ...). A flat statement costs no per-call composition (fragments cost ~100 µs of client
 * CPU per call in postgres.js), and its text is written once instead of copied by hand.
 */
export function statement<Row extends object, Params extends readonly unknown[]>(text: string) {
  return (sql: Sql | TransactionSql, ...params: Params): Promise<Row[]> =>
    sql.unsafe<Row[]>(
      text,
      params as unknown as never[],
      PREPARED_EVEN_WITHOUT_PARAMETERS,
    ) as unknown as Promise<Row[]>;
}

/**
 * `sql.unsafe` with no parameters runs as a simple query (postgres.js defaults `simple` to "no arguments"),
 * whatever `prepare` says: parsed and planned by PostgreSQL on every call, its rows sent as text. That made
 * "block, latest" (the one statement without parameters) cost 195–230 µs per request against 117–126 for a
 * block by height (PostgreSQL 68 vs 31 µs a request under the profiler although the statement itself read
 * fewer buffers; bench finding F-store-prepared-without-parameters).
 */
const PREPARED_EVEN_WITHOUT_PARAMETERS = { ...PREPARED, simple: false } as const;
