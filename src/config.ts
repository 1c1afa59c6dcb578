import Value from 'typebox/value';
import { OperatorError } from './errors.js';
import { settings, type Config, type Setting } from './settings.js';

export type { Config };

/** A setting with a bad value (or settings that do not go together), named in the message. */
export class ConfigError extends OperatorError {}

/** Reads and validates every setting; a bad value throws a ConfigError naming the variable. */
export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  const config: Record<string, unknown> = {};
  for (const [name, setting] of Object.entries(settings) as [string, Setting][]) {
    const raw = env[name];
    if (raw === undefined || raw === '') {
      config[name] = setting.default;
      continue;
    }
    const value = fromEnvironment(setting.schema, raw);
    if (!Value.Check(setting.schema, value) || (setting.url && !parsesAsUrls(raw))) {
      const detail = setting.expected
        ? `expected ${setting.expected}`
        : (Value.Errors(setting.schema, value)[0]?.message ?? 'invalid value');
      // a URL may carry a password: its text is not repeated
      const shown = setting.url ? name : `${name}=${JSON.stringify(raw)}`;
      throw new ConfigError(`${shown}: ${detail} (${setting.doc})`);
    }
    config[name] = value;
  }
  return config as Config;
}

/** Whether each comma-separated part of `text` is a URL the WHATWG parser (and so the clients) accepts. */
function parsesAsUrls(text: string): boolean {
  return text.split(',').every((part) => URL.canParse(part.trim()));
}

/**
 * An environment string as the value its schema expects: booleans `true`/`false` (or `1`/`0`, any case),
 * integers in decimal; anything else is left as it is, for the schema check to refuse and name.
 */
function fromEnvironment(schema: { type?: string }, raw: string): unknown {
  const text = raw.trim();
  if (schema.type === 'boolean') {
    if (/^(true|1)$/i.test(text)) return true;
    if (/^(false|0)$/i.test(text)) return false;
  }
  if (schema.type === 'integer' && /^-?\d+$/.test(text)) return Number(text);
  return raw;
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

/** Where a postgres:// URL points, without its credentials (for logs and errors). */
export function databaseTarget(url: string): string {
  try {
    const parsed = new URL(url);
    return `postgres://${parsed.hostname}:${parsed.port || 5432}${parsed.pathname}`;
  } catch {
    return 'postgres://(unparsable URL)';
  }
}

/** The database a configuration opens, without credentials. */
export function describeDatabase(config: Pick<Config, 'DATABASE_URL' | 'PGLITE_DIR'>): string {
  if (config.DATABASE_URL) return `PostgreSQL at ${databaseTarget(config.DATABASE_URL)}`;
  return config.PGLITE_DIR.startsWith('memory://') ? 'PGlite in memory' : `PGlite in ${config.PGLITE_DIR}`;
}
