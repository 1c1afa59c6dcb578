import type { Static } from 'typebox';

/** A TCP port to listen on (0: one the system picks). */
const port = { type: 'integer', minimum: 0, maximum: 65535 } as const;
/** An address to bind a listening socket to. */
const bindAddress = { type: 'string', minLength: 1 } as const;

/**
 * Every setting of the service, read once from the environment at boot (src/config.ts validates them).
 * Each entry names its environment variable, its JSON schema, its default and what it does; `expected`
 * says in words what a valid value looks like (for the error about a bad one); a `url` setting must parse as
 * one (or as a comma-separated list of them) and, as it may carry a password, is never repeated in that
 * error. Plain data: the CLI prints it in `--help` without
 * loading a validator (TypeBox takes ~0.8 s to load under tsx).
 */
export const settings = {
  DATABASE_URL: {
    schema: { type: 'string', pattern: '^(postgres(ql)?://\\S+)?$' },
    default: '',
    doc: 'postgres://… URL of the PostgreSQL primary; when empty the embedded PGlite in PGLITE_DIR is used',
    expected: 'a postgres://user:password@host:port/database URL',
    url: true,
  },
  DATABASE_REPLICA_URLS: {
    schema: { type: 'string', pattern: '^(postgres(ql)?://[^,\\s]+)?(\\s*,\\s*postgres(ql)?://[^,\\s]+)*$' },
    default: '',
    doc: 'comma-separated postgres://… URLs of streaming replicas; when set the read API reads from one of them (docs/deploy.md)',
    expected: 'comma-separated postgres://user:password@host:port/database URLs',
    url: true,
  },
  PGLITE_DIR: {
    schema: { type: 'string', minLength: 1 },
    default: './data/pglite',
    doc: 'data directory of the embedded PGlite database (memory:// keeps it in memory)',
  },
  DB_POOL_MAX: {
    schema: { type: 'integer', minimum: 1, maximum: 100 },
    default: 1,
    doc: 'PostgreSQL connections per process (a pipelined single connection is fastest on 2 cores; PGlite always uses 1)',
  },
  DB_CONNECT_TIMEOUT_MS: {
    schema: { type: 'integer', minimum: 100, maximum: 60000 },
    // A request waits about two connection attempts before its 503 while the database is down: 400 ms
    // keeps that under a second (a connection on a healthy network opens in a few ms).
    default: 400,
    doc: 'how long opening a database connection may take; past it, API requests answer 503',
  },
  API_HOST: {
    schema: bindAddress,
    default: '0.0.0.0',
    doc: 'public read API bind address',
  },
  API_PORT: {
    schema: port,
    default: 3999,
    doc: 'public read API port',
  },
  API_HEADERS_TIMEOUT_MS: {
    schema: { type: 'integer', minimum: 1000, maximum: 600000 },
    default: 10000,
    doc: 'how long a read API client may take to send its request headers; past it the connection is closed (slowloris)',
  },
  API_REQUEST_TIMEOUT_MS: {
    schema: { type: 'integer', minimum: 1000, maximum: 600000 },
    default: 30000,
    doc: 'how long a read API client may take to send its whole request (at least API_HEADERS_TIMEOUT_MS); past it: 408 and the connection closed',
  },
  API_KEEP_ALIVE_TIMEOUT_MS: {
    schema: { type: 'integer', minimum: 1000, maximum: 600000 },
    // Fastify's default: longer than the 60 s idle timeout of common load balancers, which must close an idle
    // connection before the server does (else a request sent as the server closes it fails).
    default: 72000,
    doc: 'how long an idle keep-alive connection to the read API stays open',
  },
  API_MAX_CONNECTIONS: {
    schema: { type: 'integer', minimum: 1, maximum: 1000000 },
    default: 8192,
    doc: "open connections to the read API at most; new ones are closed at once above it (lowered to the process's open-file limit less a reserve)",
  },
  API_MAX_CONNECTIONS_PER_IP: {
    schema: { type: 'integer', minimum: 1, maximum: 1000000 },
    default: 100,
    doc: 'open connections to the read API per client IP (IPv6: per /64) at most; TRUSTED_PROXIES are not limited per IP',
  },
  CACHE_MAX_MB: {
    schema: { type: 'integer', minimum: 0, maximum: 65536 },
    default: 128,
    doc: 'memory the read API may spend on cached answers and renderings, all routes together, in MiB (counted by what they retain); 0 keeps none',
  },
  PUSH_ENABLED: {
    schema: { type: 'boolean' },
    default: true,
    doc: 'live push on the read API port: WebSocket JSON-RPC at /extended/v1/ws and socket.io at /socket.io/',
  },
  PUSH_MAX_CONNECTIONS_PER_IP: {
    schema: { type: 'integer', minimum: 1, maximum: 1000000 },
    default: 10,
    doc: 'live-push connections per client IP (IPv6: per /64) without an API key; more get 429',
  },
  PUSH_MAX_CONNECTIONS_PER_KEY: {
    schema: { type: 'integer', minimum: 1, maximum: 1000000 },
    default: 100,
    doc: 'live-push connections per API key, whatever the client IP; more get 429',
  },
  PUSH_MAX_SUBSCRIPTIONS: {
    schema: { type: 'integer', minimum: 1, maximum: 100000 },
    default: 100,
    doc: 'topics one live-push connection may subscribe to; a subscription past it is refused',
  },
  PUSH_MAX_MESSAGE_BYTES: {
    schema: { type: 'integer', minimum: 1024, maximum: 16777216 },
    default: 16384,
    doc: 'largest message a live-push client may send (a subscribe request); a larger one closes its connection',
  },
  PUSH_MAX_BUFFERED_KB: {
    schema: { type: 'integer', minimum: 16, maximum: 1048576 },
    default: 1024,
    doc: 'live-push data waiting to be sent to one client, in KiB; a client that falls further behind is disconnected',
  },
  PUSH_PING_INTERVAL_MS: {
    schema: { type: 'integer', minimum: 1000, maximum: 600000 },
    default: 20000,
    doc: 'how often an idle live-push connection is pinged; one that has not answered by the next ping is closed',
  },
  OBSERVER_HOST: {
    schema: bindAddress,
    default: '127.0.0.1',
    doc: 'event-observer bind address (loopback: only the local stacks-node may post)',
  },
  OBSERVER_PORT: {
    schema: port,
    default: 3700,
    doc: 'event-observer port',
  },
  OBSERVER_BODY_LIMIT_MB: {
    schema: { type: 'integer', minimum: 1, maximum: 2048 },
    default: 500,
    doc: 'largest event-observer message accepted, in MiB',
  },
  INGEST_STALL_SECONDS: {
    schema: { type: 'integer', minimum: 1, maximum: 86400 },
    // The largest blocks take tens of seconds to apply (a 40 MB block: ~20 s on PGlite): a bound well above.
    default: 120,
    doc: 'how long observer messages may wait without one being taken before GET /ready answers 503 (ingest stuck)',
  },
  OBSERVER_SECRET: {
    schema: { type: 'string', pattern: '^([A-Za-z0-9_-]{16,})?$' },
    default: '',
    doc: 'when set, the observer accepts only requests whose path starts with /<secret>/ (the node endpoint host:port/<secret>); others get 401. 16+ characters of A-Z a-z 0-9 _ -',
  },
  CHAIN_ID: {
    schema: { type: 'string', pattern: '^(0x[0-9a-fA-F]{1,8}|[0-9]+)$' },
    default: '0x00000001',
    doc: 'Stacks chain id (0x00000001 mainnet, 0x80000000 testnet); decides the network of burnchain-op txs',
  },
  API_KEYS_REQUIRED: {
    schema: { type: 'boolean' },
    default: false,
    doc: 'true: a read API request without X-API-Key gets 401 (false: it is served with the anonymous limit)',
  },
  RATE_LIMIT_ENABLED: {
    schema: { type: 'boolean' },
    default: true,
    doc: 'per-minute request limits on the read API (429 over the limit)',
  },
  RATE_LIMIT_ANON_PER_MIN: {
    schema: { type: 'integer', minimum: 1 },
    default: 50,
    doc: 'requests per minute per client IP without an API key',
  },
  RATE_LIMIT_KEY_PER_MIN: {
    schema: { type: 'integer', minimum: 1 },
    default: 500,
    doc: 'requests per minute per API key, whatever the client IP',
  },
  TRUSTED_PROXIES: {
    schema: { type: 'string', pattern: '^[0-9A-Za-z:./, ]*$' },
    default: '',
    doc: 'comma-separated proxy IPs/CIDRs (or loopback, linklocal, uniquelocal) whose X-Forwarded-For is believed',
  },
  REDIS_URL: {
    schema: { type: 'string', pattern: '^(rediss?://.+)?$' },
    default: '',
    doc: 'redis://… to share rate-limit counters between instances; empty keeps them in process memory',
    expected: 'a redis:// or rediss:// URL',
    url: true,
  },
  VESTING_FILE: {
    schema: { type: 'string' },
    default: '',
    doc: 'Stacks 1.0 token-offering vesting schedule (rows address,value,blocks) shown as token_offering_locked in balances; loaded at start-up and by migrate when its content changed; empty: keep what is loaded',
  },
  TEST_PAUSE_BEFORE_COMMIT_MS: {
    schema: { type: 'integer', minimum: 0, maximum: 600000 },
    default: 0,
    doc: 'testing only (crash-safety tests): every event-observer message waits this long inside its database transaction, after its rows are written and before COMMIT; 0 = off',
  },
  TEST_PAUSE_AFTER_COMMIT_MS: {
    schema: { type: 'integer', minimum: 0, maximum: 600000 },
    default: 0,
    doc: 'testing only (crash-safety tests): every event-observer message waits this long after its COMMIT, before the 200 is sent; 0 = off',
  },
  METRICS_ENABLED: {
    schema: { type: 'boolean' },
    default: true,
    doc: 'serve Prometheus metrics on METRICS_HOST:METRICS_PORT (GET /metrics)',
  },
  METRICS_HOST: {
    schema: bindAddress,
    default: '127.0.0.1',
    doc: 'Prometheus metrics bind address (loopback: scraped by a local agent, never public)',
  },
  METRICS_PORT: {
    schema: port,
    default: 9153,
    doc: 'Prometheus metrics port (two processes on one host need two ports)',
  },
  LOG_LEVEL: {
    schema: { type: 'string', enum: ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] },
    default: 'info',
    doc: 'pino log level',
  },
  LOG_FORMAT: {
    schema: { type: 'string', enum: ['auto', 'json', 'pretty'] },
    default: 'auto',
    doc: 'log lines as JSON (for machines) or pretty (for people); auto: pretty when stdout is a terminal',
  },
  LOG_REQUESTS: {
    schema: { type: 'boolean' },
    default: true,
    doc: 'log one line per read API request at info (method, route, status, ms, client IP)',
  },
} as const;

/** What every entry of `settings` holds. */
export interface Setting {
  schema: { type: string; pattern?: string; enum?: readonly string[] };
  default: string | number | boolean;
  doc: string;
  expected?: string;
  url?: boolean;
}

type Settings = typeof settings;
export type Config = { -readonly [K in keyof Settings]: Static<Settings[K]['schema']> };

/** The settings table for `--help` and the README. */
export function describeConfig(): { name: string; default: string; doc: string }[] {
  return Object.entries(settings).map(([name, s]) => ({ name, default: String(s.default), doc: s.doc }));
}
