import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createClient } from '@stacks/blockchain-api-client';
import type { TSchema } from 'typebox';
import { Compile } from 'typebox/compile';
import { routeSchemas } from '../../src/api/plugins/openapi.js';
import { firstDifference, normalize } from '../conformance/harness.js';
import { CONTRACT_ENDPOINTS } from '../support/contract.js';
import { startTestApi, type TestApi } from '../support/api.js';
import { stopOwnCluster } from '../support/database.js';
import { testEngines } from '../support/engines.js';
import { loadGolden, type GoldenRecord } from '../support/shared.js';

// The official client (@stacks/blockchain-api-client, unmodified) against our server over a real socket,
// on a replayed fixture: each of the ten endpoints is called through it, the URL it sends is the one the
// original API was asked when the goldens were recorded, the body equals the original API's answer, and
// it validates against the route's own response schema (the client itself validates nothing).

after(stopOwnCluster);

const FIXTURE = 'fuzzed-transactions-1';
const PRINCIPAL = 'ST332DWHNM323264X869MKXFZABSE5WZ60EA07TJ1';
const CONTRACT_DEPLOY = '0x322e00a916a8af811be9082e48786ab84b7210a70876eff0634c1eefb82ded7e';
const MINED = '0x554a5647fa5aeaf6a30d5e160207a8cdff2580e0b8ffd93f5d1e194494286a00';
const UNKNOWN = '0x' + 'ab'.repeat(32);

type Client = ReturnType<typeof createClient>;
interface Answer {
  data?: unknown;
  error?: unknown;
  response: Response;
}

/** Each contract endpoint: how the client calls it, and the golden path that call must produce. */
const CALLS: Record<string, { golden: string; call: (client: Client) => Promise<Answer> }> = {
  '4.1': {
    golden: `/extended/v1/address/${PRINCIPAL}/balances`,
    call: (c) =>
      c.GET('/extended/v1/address/{principal}/balances', { params: { path: { principal: PRINCIPAL } } }),
  },
  '4.2': {
    golden: `/extended/v1/tx/${CONTRACT_DEPLOY}`,
    call: (c) => c.GET('/extended/v1/tx/{tx_id}', { params: { path: { tx_id: CONTRACT_DEPLOY } } }),
  },
  '4.3': {
    golden: '/extended/v2/blocks/12',
    call: (c) => c.GET('/extended/v2/blocks/{height_or_hash}', { params: { path: { height_or_hash: 12 } } }),
  },
  '4.4': {
    golden: `/extended/v1/tx/multiple?tx_id=${MINED}&tx_id=${UNKNOWN}`,
    call: (c) => c.GET('/extended/v1/tx/multiple', { params: { query: { tx_id: [MINED, UNKNOWN] } } }),
  },
  '4.5': {
    golden: '/extended/v1/tx/mempool/stats',
    call: (c) => c.GET('/extended/v1/tx/mempool/stats'),
  },
  '4.6': {
    golden: '/extended/v2/mempool/fees',
    call: (c) => c.GET('/extended/v2/mempool/fees'),
  },
  '4.7': {
    golden: `/extended/v2/smart-contracts/status?contract_id=${PRINCIPAL}.winterpoc&contract_id=ST19XY8C456FWH704JR77ZKFTPBNVNK52Q1CK01JD.no-such-contract`,
    call: (c) =>
      c.GET('/extended/v2/smart-contracts/status', {
        params: {
          query: {
            contract_id: [
              `${PRINCIPAL}.winterpoc`,
              'ST19XY8C456FWH704JR77ZKFTPBNVNK52Q1CK01JD.no-such-contract',
            ],
          },
        },
      }),
  },
  '4.8': {
    golden: `/extended/v1/address/${PRINCIPAL}/transactions_with_transfers`,
    call: (c) =>
      c.GET('/extended/v1/address/{principal}/transactions_with_transfers', {
        params: { path: { principal: PRINCIPAL } },
      }),
  },
  '4.9': {
    golden: `/extended/v1/address/${PRINCIPAL}/${CONTRACT_DEPLOY}/with_transfers`,
    call: (c) =>
      c.GET('/extended/v1/address/{principal}/{tx_id}/with_transfers', {
        params: { path: { principal: PRINCIPAL, tx_id: CONTRACT_DEPLOY } },
      }),
  },
  '4.10': {
    golden: '/extended/v1/block/by_burn_block_height/243',
    call: (c) =>
      c.GET('/extended/v1/block/by_burn_block_height/{burn_block_height}', {
        params: { path: { burn_block_height: 243 } },
      }),
  },
};

const goldens = new Map<string, GoldenRecord>(loadGolden(FIXTURE).map((r) => [r.path, r]));

for (const engine of testEngines(import.meta.url)) {
  describe(`official client @stacks/blockchain-api-client (${engine})`, () => {
    let api: TestApi;
    let client: Client;

    before(async () => {
      api = await startTestApi({ engine, fixture: FIXTURE, listen: true });
      client = createClient({ baseUrl: api.baseUrl });
    });

    after(async () => {
      await api?.close();
    });

    test('the ten calls are all covered here', () => {
      assert.deepEqual(
        Object.keys(CALLS),
        CONTRACT_ENDPOINTS.map((e) => e.section),
      );
    });

    for (const endpoint of CONTRACT_ENDPOINTS) {
      const { golden: goldenPath, call } = CALLS[endpoint.section];
      test(`${endpoint.section} GET ${endpoint.path}`, async () => {
        const golden = goldens.get(goldenPath);
        assert.ok(golden, `golden record for ${goldenPath}`);
        const { data, error, response } = await call(client);
        const sent = new URL(response.url);
        assert.equal(decodeURIComponent(sent.pathname + sent.search), goldenPath, 'the URL the client sent');
        assert.equal(response.status, 200, JSON.stringify(error));
        assert.equal(error, undefined);

        const schema = routeSchemas(api.app).get(`GET ${endpoint.route}`)?.response as
          Record<string, TSchema> | undefined;
        assert.ok(schema?.['200'], `a 200 response schema on ${endpoint.route}`);
        const validator = Compile(schema['200']);
        assert.ok(validator.Check(data), JSON.stringify(validator.Errors(data).slice(0, 3)));

        const ours = normalize(goldenPath, data) as Record<string, unknown>;
        if (endpoint.section === '4.9') {
          // Deliberate difference: we answer the full 2.4 shape, upstream omits the FT/NFT transfers.
          assert.ok(Array.isArray(ours.ft_transfers) && Array.isArray(ours.nft_transfers));
          delete ours.ft_transfers;
          delete ours.nft_transfers;
        }
        const difference = firstDifference(ours, normalize(goldenPath, golden.body));
        assert.equal(difference, null, 'same body as the original API');
        assert.equal(endpoint.deprecated, response.headers.get('warning')?.startsWith('299') ?? false);
      });
    }
  });
}
