import type { TransactionSql } from '../db.js';

// Which of a message's statements PostgreSQL plans on every call, and which once per connection: the one
// place that decides it.
//
// A prepared statement (ingest prepares all of its statements) is planned either with its parameters' values
// on each call (a custom plan) or once for any values (a generic plan, cached). The generic plan of a
// statement that reads a table (a join, a WHERE, an UPDATE's rows: the same-nonce resolution, the mempool
// prune, the mined-id check, the principal index probe, ...) is made with the sizes the tables have then: made
// while they are small, it would keep scanning them whole as they grow (until an ANALYZE happens to
// invalidate it), and an array parameter's length, which decides joins, is unknown to it. So a message's
// transaction plans every statement on every call (`planEveryCall`) unless the statement is one whose plan
// cannot go wrong (`withOnePlan`): an insert of rows given in arrays (`INSERT ... SELECT unnest($1), ...`,
// with or without ON CONFLICT, whose conflict probes use the arbiter index whatever the plan) has one
// possible plan, whatever the sizes, and planning it on every call was most of a message's planning: forcing
// custom plans on every statement cost the ingest backend 12-15 µs per tx (bench finding
// F-ingest-plan-cache, with what this gives back). A statement that is not marked here is planned per call: a
// reading statement left unmarked costs planning, never a wrong plan.
// (test/store/plan-cache.test.ts reads each statement's plan counts after a replay.)

/** Transactions planning per call (message transactions): only there does `withOnePlan` switch modes. */
const plannedPerCall = new WeakSet<TransactionSql>();

/**
 * `SET LOCAL` sent prepared (Bind and Execute, no parse each time; postgres.js sends a statement without
 * parameters as a simple query unless told): a utility statement has no plan to make.
 */
const PREPARED_WITHOUT_PARAMETERS = { prepare: true, simple: false } as const;

const setPlanCacheMode = (sql: TransactionSql, mode: 'force_custom_plan' | 'force_generic_plan') =>
  sql.unsafe(`SET LOCAL plan_cache_mode = ${mode}`, [], PREPARED_WITHOUT_PARAMETERS).execute();

/**
 * From now on in this transaction, every statement is planned with its parameters on each call, except the
 * ones sent through `withOnePlan`. Returns the `SET` statement (sent, to be awaited with the others).
 */
export function planEveryCall(sql: TransactionSql): Promise<unknown> {
  plannedPerCall.add(sql);
  return setPlanCacheMode(sql, 'force_custom_plan');
}

/**
 * Sends a statement whose plan cannot depend on the tables' sizes or its parameters (an insert from arrays:
 * see above), planned once per connection and reused: between two `SET LOCAL`s, sent with it, without waiting
 * (postgres.js pipelines them; the server runs them in order). `send` must send its statement at once
 * (synchronously), so nothing else goes between them. In a transaction that does not plan per call (not a
 * message's: a test's, the migration's), the statement is just sent.
 */
export function withOnePlan<T>(sql: TransactionSql, send: () => Promise<T>): Promise<T> {
  if (!plannedPerCall.has(sql)) return send();
  const before = setPlanCacheMode(sql, 'force_generic_plan');
  const sent = send();
  const after = setPlanCacheMode(sql, 'force_custom_plan');
  return Promise.all([before, sent, after]).then(([, result]) => result);
}
