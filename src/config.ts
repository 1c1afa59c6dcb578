import Type, { type Static } from 'typebox';
import Value from 'typebox/value';

/**
 * Every setting of the service, read once from the environment at boot.
 * Each entry names its environment variable, its default and what it does.
 */
const settings = {
  DATABASE_URL: {
    schema: Type.String(),
    default: '',
    doc: 'postgres://… URL of the PostgreSQL primary; when empty the embedded PGlite in PGLITE_DIR is used',
  },
  DATABASE_REPLICA_URLS: {
    schema: Type.String({ pattern: '^(postgres(ql)?://[^,\\s]+)?(\\s*,\\s*postgres(ql)?://[^,\\s]+)*$' }),
    default: '',
    doc: 'comma-separated postgres://… URLs of streaming replicas; when set the read API reads from one of them (docs/deploy.md)',
  },
  PGLITE_DIR: {
    schema: Type.String({ minLength: 1 }),
    default: './data/pglite',
    doc: 'data directory of the embedded PGlite database (memory:// keeps it in memory)',
  },
  DB_POOL_MAX: {
    schema: Type.Integer({ minimum: 1, maximum: 100 }),
    default: 1,
    doc: 'PostgreSQL connections per process (a pipelined single connection is fastest on 2 cores; PGlite always uses 1)',
  },
  DB_CONNECT_TIMEOUT_MS: {
    schema: Type.Integer({ minimum: 100, maximum: 60000 }),
    // A request waits about two connection attempts before its 503 while the database is down: 400 ms
    // keeps that under a second (a connection on a healthy network opens in a few ms).
    default: 400,
    doc: 'how long opening a database connection may take; past it, API requests answer 503',
  },
  API_HOST: {
    schema: Type.String({ minLength: 1 }),
    default: '0.0.0.0',
    doc: 'public read API bind address',
  },
  API_PORT: {
    schema: Type.Integer({ minimum: 0, maximum: 65535 }),
    default: 3999,
    doc: 'public read API port',
  },
  OBSERVER_HOST: {
    schema: Type.String({ minLength: 1 }),
    default: '127.0.0.1',
    doc: 'event-observer bind address (loopback: only the local stacks-node may post)',
  },
  OBSERVER_PORT: {
    schema: Type.Integer({ minimum: 0, maximum: 65535 }),
    default: 3700,
    doc: 'event-observer port',
  },
  OBSERVER_BODY_LIMIT_MB: {
    schema: Type.Integer({ minimum: 1, maximum: 2048 }),
    default: 500,
    doc: 'largest event-observer message accepted, in MiB',
  },
  CHAIN_ID: {
    schema: Type.String({ pattern: '^(0x[0-9a-fA-F]{1,8}|[0-9]+)$' }),
    default: '0x00000001',
    doc: 'Stacks chain id (0x00000001 mainnet, 0x80000000 testnet); decides the network of synthetic txs',
  },
  API_KEYS_REQUIRED: {
    schema: Type.Boolean(),
    default: false,
    doc: 'true: a read API request without X-API-Key gets 401 (false: it is served with the anonymous limit)',
  },
  RATE_LIMIT_ENABLED: {
    schema: Type.Boolean(),
    default: true,
    doc: 'per-minute request limits on the read API (429 over the limit)',
  },
  RATE_LIMIT_ANON_PER_MIN: {
    schema: Type.Integer({ minimum: 1 }),
    default: 50,
    doc: 'requests per minute per client IP without an API key',
  },
  RATE_LIMIT_KEY_PER_MIN: {
    schema: Type.Integer({ minimum: 1 }),
    default: 500,
    doc: 'requests per minute per API key, whatever the client IP',
  },
  TRUSTED_PROXIES: {
    schema: Type.String({ pattern: '^[0-9A-Za-z:./, ]*$' }),
    default: '',
    doc: 'comma-separated proxy IPs/CIDRs (or loopback, linklocal, uniquelocal) whose X-Forwarded-For is believed',
  },
  REDIS_URL: {
    schema: Type.String({ pattern: '^(rediss?://.+)?$' }),
    default: '',
    doc: 'redis://… to share rate-limit counters between instances; empty keeps them in process memory',
  },
  VESTING_FILE: {
    schema: Type.String(),
    default: '',
    doc: 'Stacks 1.0 token-offering vesting schedule (rows address,value,blocks) shown as token_offering_locked in balances; loaded at start-up and by migrate when its content changed; empty: keep what is loaded',
  },
  TEST_PAUSE_BEFORE_COMMIT_MS: {
    schema: Type.Integer({ minimum: 0, maximum: 600000 }),
    default: 0,
    doc: 'testing only (crash-safety tests): every event-observer message waits this long inside its database transaction, after its rows are written and before COMMIT; 0 = off',
  },
  TEST_PAUSE_AFTER_COMMIT_MS: {
    schema: Type.Integer({ minimum: 0, maximum: 600000 }),
    default: 0,
    doc: 'testing only (crash-safety tests): every event-observer message waits this long after its COMMIT, before the 200 is sent; 0 = off',
  },
  METRICS_ENABLED: {
    schema: Type.Boolean(),
    default: true,
    doc: 'serve Prometheus metrics on METRICS_HOST:METRICS_PORT (GET /metrics)',
  },
  METRICS_HOST: {
    schema: Type.String({ minLength: 1 }),
    default: '127.0.0.1',
    doc: 'Prometheus metrics bind address (loopback: scraped by a local agent, never public)',
  },
  METRICS_PORT: {
    schema: Type.Integer({ minimum: 0, maximum: 65535 }),
    default: 9153,
    doc: 'Prometheus metrics port (two processes on one host need two ports)',
  },
  LOG_LEVEL: {
    schema: Type.Union([
      Type.Literal('fatal'),
      Type.Literal('error'),
      Type.Literal('warn'),
      Type.Literal('info'),
      Type.Literal('debug'),
      Type.Literal('trace'),
      Type.Literal('silent'),
    ]),
    default: 'info',
    doc: 'pino log level',
  },
} as const;

type Settings = typeof settings;
export type Config = { [K in keyof Settings]: Static<Settings[K]['schema']> };

export class ConfigError extends Error {}

/** Reads and validates every setting; a bad value throws a ConfigError naming the variable. */
export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  const config: Record<string, unknown> = {};
  for (const [name, setting] of Object.entries(settings)) {
    const raw = env[name];
    if (raw === undefined || raw === '') {
      config[name] = setting.default;
      continue;
    }
    const value = Value.Convert(setting.schema, raw);
    if (!Value.Check(setting.schema, value)) {
      const detail = Value.Errors(setting.schema, value)[0]?.message ?? 'invalid value';
      throw new ConfigError(`${name}=${JSON.stringify(raw)}: ${detail} (${setting.doc})`);
    }
    config[name] = value;
  }
  return config as Config;
}

/** The settings table for `--help` and the README. */
export function describeConfig(): { name: string; default: string; doc: string }[] {
  return Object.entries(settings).map(([name, s]) => ({ name, default: String(s.default), doc: s.doc }));
}

function chainIdNumber(config: Pick<Config, 'CHAIN_ID'>): number {
  return Number(config.CHAIN_ID);
}

export function isMainnet(config: Pick<Config, 'CHAIN_ID'>): boolean {
  return chainIdNumber(config) === 1;
}

/** DATABASE_REPLICA_URLS as a list (empty when no replica is configured). */
export function replicaUrls(config: Pick<Config, 'DATABASE_REPLICA_URLS'>): string[] {
  return config.DATABASE_REPLICA_URLS.split(',')
    .map((url) => url.trim())
    .filter((url) => url.length > 0);
}
