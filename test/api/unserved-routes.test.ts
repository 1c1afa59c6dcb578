import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { routeSchemas } from '../../src/api/plugins/openapi.js';
import { ORIGINAL_API_ROUTES } from '../../src/api/routes/unserved.js';
import { startTestApi, type TestApi } from '../support/api.js';
import { stopOwnCluster } from '../support/database.js';

// A path this API does not serve is a 404 naming the route, whatever route of ours has a parameter in the
// same place. Checked on every GET route of the original API, as its client package lists them.

after(stopOwnCluster);

/** The GET routes of `@stacks/blockchain-api-client`'s OpenAPI types, written as Fastify writes them. */
function clientRoutes(): string[] {
  const require = createRequire(import.meta.url);
  const types = join(dirname(require.resolve('@stacks/blockchain-api-client')), 'generated/schema.d.ts');
  const parts = readFileSync(types, 'utf8').split(/\n {4}"(\/[^"]*)": \{/);
  const routes: string[] = [];
  for (let i = 1; i < parts.length; i += 2) {
    const operations = parts[i + 1].split('\n    };')[0];
    if (/\n {8}get: /.test(operations)) routes.push(parts[i].replace(/\{([^}]+)\}/g, ':$1'));
  }
  return routes;
}

describe('routes the API does not serve', () => {
  let api: TestApi;
  before(async () => {
    api = await startTestApi({ engine: 'postgres' });
  });
  after(() => api?.close());

  const notFound = async (path: string) => {
    const res = await api.app.inject({ method: 'GET', url: path });
    return { status: res.statusCode, body: res.json() as unknown };
  };
  const routeNotFound = (path: string) => ({
    status: 404,
    body: { statusCode: 404, error: 'Not Found', message: `Route GET:${path} not found` },
  });

  test('the list is the original API’s GET routes, as its client package has them', () => {
    const routes = clientRoutes();
    assert.ok(routes.length > 100, `${routes.length} routes`);
    assert.deepEqual([...ORIGINAL_API_ROUTES].sort(), routes.sort());
  });

  test('a static path of the original API is no malformed parameter of ours: 404 naming it', async () => {
    for (const path of [
      '/extended/v1/tx/events',
      '/extended/v1/tx/block_height/x',
      '/extended/v2/blocks/average-times',
    ]) {
      assert.deepEqual(await notFound(path), routeNotFound(path));
    }
    // the routes of ours beside them still take their parameters: a malformed one is a 400
    assert.equal((await notFound('/extended/v1/tx/not-a-tx-id')).status, 400);
    assert.equal((await notFound('/extended/v2/blocks/not-a-block')).status, 400);
  });

  /** The original's routes beyond the contract's ten that this API serves (docs/upstream.md C.1 to C.19). */
  const BEYOND_THE_TEN_SERVED = [
    '/extended/v1/block/:hash',
    '/extended/v1/block/by_height/:height',
    '/extended/v1/block/by_burn_block_hash/:burn_block_hash',
    '/extended/v1/microblock/:hash',
    '/extended/v1/address/:principal/mempool',
    '/extended/v1/contract/:contract_id',
    '/extended/v1/search/:id',
    '/extended/v1/tokens/nft/holdings',
    '/extended/v1/address/:principal/nonces',
    '/extended/v1/address/:principal/stx',
    '/extended/v1/tx/',
    '/extended/v1/tx/mempool',
    '/extended/v2/addresses/:address/transactions',
    '/extended/v2/addresses/:address/transactions/:tx_id/events',
    '/extended/v2/addresses/:principal/balances/ft',
    '/extended/v2/addresses/:principal/balances/stx',
    '/extended/v2/blocks/',
    '/extended/v2/blocks/:height_or_hash/transactions',
    '/extended/v2/burn-blocks/',
    '/extended/v2/burn-blocks/:height_or_hash',
    '/extended/v2/burn-blocks/:height_or_hash/blocks',
  ];

  test('every route of the original API is served, or answers 404 naming the route', async () => {
    const served = routeSchemas(api.app);
    const ours: string[] = [];
    for (const route of ORIGINAL_API_ROUTES) {
      if (served.has(`GET ${route}`) || served.has(`GET ${route.replace(/(.)\/$/, '$1')}`)) {
        ours.push(route);
        continue;
      }
      const path = route.replace(/:[a-z_A-Z]+/g, 'x');
      assert.deepEqual(await notFound(path), routeNotFound(path), route);
    }
    // the ten endpoints, the status, and the routes beyond the ten
    assert.deepEqual(
      ours.sort(),
      [
        ...BEYOND_THE_TEN_SERVED,
        '/extended',
        '/extended/v1/address/:principal/:tx_id/with_transfers',
        '/extended/v1/address/:principal/balances',
        '/extended/v1/address/:principal/transactions_with_transfers',
        '/extended/v1/block/by_burn_block_height/:burn_block_height',
        '/extended/v1/tx/:tx_id',
        '/extended/v1/tx/mempool/stats',
        '/extended/v1/tx/multiple',
        '/extended/v2/blocks/:height_or_hash',
        '/extended/v2/mempool/fees',
        '/extended/v2/smart-contracts/status',
      ].sort(),
    );
    assert.deepEqual(await notFound('/extended/v9/nothing'), routeNotFound('/extended/v9/nothing'));
  });
});
