import postgres from 'postgres';

// What a failure of the database means for whoever asked, decided here once from the driver's error code or
// PostgreSQL's SQLSTATE (its first two characters are the class): the API answers from it (api/plugins/errors.ts),
// ingest tells a message's fault from the database's (ingest/ingestor.ts).

export type DatabaseFailure =
  /** the database cannot be reached, or the connection was lost: try again later */
  | 'unavailable'
  /** the statement took longer than the database allows (statement_timeout, lock_timeout) or was cancelled */
  | 'timeout'
  /** out of connections, memory or disk */
  | 'overloaded'
  /** shutting down, starting up, or in recovery */
  | 'restarting'
  /** the transaction lost a conflict with another (serialization failure, deadlock): trying again may work */
  | 'conflict'
  /** a value the database refuses (SQLSTATE class 22, data exception) */
  | 'data'
  /** any other error the database answered: a fault of this program or of the database, not a passing state */
  | 'failed';

/** The driver's own codes (postgres.js and Node's socket errors) for a connection that failed or was lost. */
const CONNECTION_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EPIPE',
  'CONNECT_TIMEOUT',
  'CONNECTION_CLOSED',
  'CONNECTION_ENDED',
  'CONNECTION_DESTROYED',
]);

/** SQLSTATE classes (the first two characters) and codes, and what they mean here. Codes win over classes. */
const BY_SQLSTATE: Record<string, DatabaseFailure> = {
  '08': 'unavailable', // connection exception
  '25006': 'restarting', // read_only_sql_transaction: the primary became a standby (a failover)
  '40': 'conflict', // transaction rollback: serialization failure, deadlock
  '53': 'overloaded', // insufficient resources: too many connections, out of memory, disk full
  '55P03': 'timeout', // lock_not_available: lock_timeout
  '57014': 'timeout', // query_canceled: statement_timeout, or a cancel request
  '57': 'restarting', // operator intervention: admin or crash shutdown, cannot connect now, database dropped
  '58': 'overloaded', // system error: an I/O error of the server
  '22': 'data',
};

/** What the error means, when it came from the database or its driver; undefined for any other error. */
export function databaseFailure(err: unknown): DatabaseFailure | undefined {
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code !== 'string') return undefined;
  if (err instanceof postgres.PostgresError) {
    return BY_SQLSTATE[code] ?? BY_SQLSTATE[code.slice(0, 2)] ?? 'failed';
  }
  if (CONNECTION_CODES.has(code)) return 'unavailable';
  // postgres.js cancelling a query it had not sent yet says so with the SQLSTATE of a cancel
  return code === '57014' ? 'timeout' : undefined;
}

/** The sentence an API client is told for each failure: what happened, never a statement or a value. */
export const FAILURE_MESSAGES: Record<DatabaseFailure, string> = {
  unavailable: 'The database service is unavailable',
  timeout: 'The database did not answer in time',
  overloaded: 'The database is out of resources (connections, memory or disk)',
  restarting: 'The database is restarting or read-only',
  conflict: 'The request conflicted with another database transaction',
  data: 'The database refused a value of this request',
  failed: 'The database failed to answer the request',
};

/** Whether asking again later may succeed (HTTP 503), or the failure will repeat (500). */
export function isPassing(failure: DatabaseFailure): boolean {
  return failure !== 'failed' && failure !== 'data';
}
