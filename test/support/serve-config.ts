import { loadConfig, type Config } from '../../src/config.js';
import { TEST_CONNECT_TIMEOUT_MS } from './database.js';

// The one place a test says how `serve` runs: in this process (`serveConfig`) or in a child (`serveEnv`, its
// environment).

/** Testnet: the chain id of the recorded mocknet and of the generator's chains. */
export const TESTNET = { CHAIN_ID: '0x80000000' } as const;

/**
 * The settings of a test's `serve`: both servers on loopback at a port the system picks (`'0'`) unless `env`
 * names one; no rate limit, no metrics, no vesting file; the tests' database connect timeout (production's
 * 400 ms is missed by a loaded machine). `env` adds to them or overrides them.
 */
export function serveEnv(env: Record<string, string> = {}): Record<string, string> {
  return {
    API_HOST: '127.0.0.1',
    API_PORT: '0',
    OBSERVER_HOST: '127.0.0.1',
    OBSERVER_PORT: '0',
    METRICS_ENABLED: 'false',
    RATE_LIMIT_ENABLED: 'false',
    VESTING_FILE: '',
    DB_CONNECT_TIMEOUT_MS: String(TEST_CONNECT_TIMEOUT_MS),
    ...env,
  };
}

/** `serveEnv` read as the configuration `serve` takes in this process. */
export function serveConfig(env: Record<string, string> = {}): Config {
  return loadConfig(serveEnv(env));
}
