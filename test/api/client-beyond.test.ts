import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createClient } from '@stacks/blockchain-api-client';
import type { TSchema } from 'typebox';
import { Compile } from 'typebox/compile';
import { routeSchemas } from '../../src/api/plugins/openapi.js';
import { firstDifference, normalize } from '../conformance/harness.js';
import { startTestApi, type TestApi } from '../support/api.js';
import { stopOwnCluster } from '../support/database.js';
import { loadGolden, type GoldenRecord } from '../support/shared.js';

// The official client (@stacks/blockchain-api-client, unmodified) calling the routes beyond the contract's ten
// over a real socket, on a replayed fixture: the URL it sends is one the original API was asked when the
// goldens were recorded (but for a trailing slash, and a default the client sends), the body equals the
// original's answer and validates against the route's schema. The mempool lists, not in the goldens, are
// called for a 200 their schema validates.

after(stopOwnCluster);

const FIXTURE = 'mocknet';
const PRINCIPAL = 'SN1TP7CNY63KQY7DVRDVPNE1X73ND3PT8JWQ13DYM';
const TX = '0xcba511741b230bd85cb5b3b10d26e0b92695d4a83f95c260cad82a40cd764235';
const BURN_HASH = '0x2b32db6c2c0a6235fb1397e8225ea85e0f0e6e8c7b126d0016ccbde0e667151e';
const CONTRACT = 'ST000000000000000000002AMW42H.bns';

type Client = ReturnType<typeof createClient>;
interface Answer {
  data?: unknown;
  error?: unknown;
  response: Response;
}

/** Each route: its template (as the schemas name it), how the client calls it, the URL it must send. */
const CALLS: {
  route: string;
  sent: string; /** the golden record's path, when the goldens hold one (its body is compared) */
  golden: string | null;
  call: (client: Client) => Promise<Answer>;
}[] = [
  {
    route: '/extended/v2/addresses/:address/transactions',
    sent: `/extended/v2/addresses/${PRINCIPAL}/transactions`,
    golden: `/extended/v2/addresses/${PRINCIPAL}/transactions`,
    call: (c) =>
      c.GET('/extended/v2/addresses/{address}/transactions', { params: { path: { address: PRINCIPAL } } }),
  },
  {
    route: '/extended/v2/addresses/:address/transactions/:tx_id/events',
    sent: `/extended/v2/addresses/${PRINCIPAL}/transactions/${TX}/events`,
    golden: `/extended/v2/addresses/${PRINCIPAL}/transactions/${TX}/events`,
    call: (c) =>
      c.GET('/extended/v2/addresses/{address}/transactions/{tx_id}/events', {
        params: { path: { address: PRINCIPAL, tx_id: TX } },
      }),
  },
  {
    route: '/extended/v2/burn-blocks/:height_or_hash/blocks',
    sent: '/extended/v2/burn-blocks/2/blocks',
    golden: '/extended/v2/burn-blocks/2/blocks',
    call: (c) =>
      c.GET('/extended/v2/burn-blocks/{height_or_hash}/blocks', { params: { path: { height_or_hash: 2 } } }),
  },
  {
    route: '/extended/v2/burn-blocks',
    sent: '/extended/v2/burn-blocks/',
    golden: '/extended/v2/burn-blocks',
    call: (c) => c.GET('/extended/v2/burn-blocks/'),
  },
  {
    route: '/extended/v2/burn-blocks/:height_or_hash',
    sent: `/extended/v2/burn-blocks/${BURN_HASH}`,
    golden: `/extended/v2/burn-blocks/${BURN_HASH}`,
    call: (c) =>
      c.GET('/extended/v2/burn-blocks/{height_or_hash}', { params: { path: { height_or_hash: BURN_HASH } } }),
  },
  {
    route: '/extended/v2/blocks',
    sent: '/extended/v2/blocks/',
    golden: '/extended/v2/blocks',
    call: (c) => c.GET('/extended/v2/blocks/'),
  },
  {
    route: '/extended/v2/blocks/:height_or_hash/transactions',
    sent: '/extended/v2/blocks/1/transactions',
    golden: '/extended/v2/blocks/1/transactions',
    call: (c) =>
      c.GET('/extended/v2/blocks/{height_or_hash}/transactions', { params: { path: { height_or_hash: 1 } } }),
  },
  {
    route: '/extended/v1/address/:principal/nonces',
    sent: `/extended/v1/address/${PRINCIPAL}/nonces`,
    golden: `/extended/v1/address/${PRINCIPAL}/nonces`,
    call: (c) =>
      c.GET('/extended/v1/address/{principal}/nonces', { params: { path: { principal: PRINCIPAL } } }),
  },
  {
    route: '/extended/v1/address/:principal/stx',
    sent: `/extended/v1/address/${PRINCIPAL}/stx`,
    golden: `/extended/v1/address/${PRINCIPAL}/stx`,
    call: (c) =>
      c.GET('/extended/v1/address/{principal}/stx', { params: { path: { principal: PRINCIPAL } } }),
  },
  {
    route: '/extended/v2/addresses/:principal/balances/stx',
    sent: `/extended/v2/addresses/${PRINCIPAL}/balances/stx`,
    golden: `/extended/v2/addresses/${PRINCIPAL}/balances/stx`,
    call: (c) =>
      c.GET('/extended/v2/addresses/{principal}/balances/stx', {
        params: { path: { principal: PRINCIPAL } },
      }),
  },
  {
    route: '/extended/v2/addresses/:principal/balances/ft',
    sent: `/extended/v2/addresses/${PRINCIPAL}/balances/ft`,
    golden: `/extended/v2/addresses/${PRINCIPAL}/balances/ft`,
    call: (c) =>
      c.GET('/extended/v2/addresses/{principal}/balances/ft', { params: { path: { principal: PRINCIPAL } } }),
  },
  {
    route: '/extended/v1/tx',
    sent: '/extended/v1/tx/',
    golden: '/extended/v1/tx',
    call: (c) => c.GET('/extended/v1/tx/'),
  },
  {
    route: '/extended/v1/tx/mempool',
    sent: '/extended/v1/tx/mempool',
    golden: null,
    call: (c) => c.GET('/extended/v1/tx/mempool'),
  },
  {
    route: '/extended/v1/address/:principal/mempool',
    sent: `/extended/v1/address/${PRINCIPAL}/mempool`,
    golden: null,
    call: (c) =>
      c.GET('/extended/v1/address/{principal}/mempool', { params: { path: { principal: PRINCIPAL } } }),
  },
  {
    route: '/extended/v1/tokens/nft/holdings',
    sent: `/extended/v1/tokens/nft/holdings?principal=${PRINCIPAL}&tx_metadata=false`,
    golden: `/extended/v1/tokens/nft/holdings?principal=${PRINCIPAL}`,
    call: (c) =>
      c.GET('/extended/v1/tokens/nft/holdings', {
        params: { query: { principal: PRINCIPAL, tx_metadata: false } },
      }),
  },
  {
    route: '/extended/v1/contract/:contract_id',
    sent: `/extended/v1/contract/${CONTRACT}`,
    golden: `/extended/v1/contract/${CONTRACT}`,
    call: (c) =>
      c.GET('/extended/v1/contract/{contract_id}', { params: { path: { contract_id: CONTRACT } } }),
  },
  {
    route: '/extended/v1/search/:id',
    sent: `/extended/v1/search/${PRINCIPAL}`,
    golden: `/extended/v1/search/${PRINCIPAL}`,
    call: (c) => c.GET('/extended/v1/search/{id}', { params: { path: { id: PRINCIPAL } } }),
  },
];

const goldens = new Map<string, GoldenRecord>(loadGolden(`beyond/${FIXTURE}`).map((r) => [r.path, r]));

describe('official client @stacks/blockchain-api-client, the routes beyond the ten (postgres)', () => {
  let api: TestApi;
  let client: Client;

  before(async () => {
    api = await startTestApi({ engine: 'postgres', fixture: FIXTURE, listen: true });
    client = createClient({ baseUrl: api.baseUrl });
  });
  after(async () => {
    await api?.close();
  });

  for (const { route, sent: expectedUrl, golden: goldenPath, call } of CALLS) {
    test(`GET ${route}`, async () => {
      const { data, error, response } = await call(client);
      const sent = new URL(response.url);
      assert.equal(decodeURIComponent(sent.pathname + sent.search), expectedUrl, 'the URL the client sent');
      assert.equal(response.status, 200, JSON.stringify(error));
      const schema = routeSchemas(api.app).get(`GET ${route}`)?.response as
        Record<string, TSchema> | undefined;
      assert.ok(schema?.['200'], `a 200 response schema on ${route}`);
      const validator = Compile(schema['200']);
      assert.ok(validator.Check(data), JSON.stringify(validator.Errors(data).slice(0, 3)));
      if (goldenPath === null) return;
      const golden = goldens.get(goldenPath);
      assert.ok(golden, `golden record for ${goldenPath}`);
      const difference = firstDifference(normalize(goldenPath, data), normalize(goldenPath, golden.body));
      assert.equal(difference, null, 'same body as the original API');
    });
  }
});
