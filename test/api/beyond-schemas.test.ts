import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Validator as OpenApiValidator } from '@seriousme/openapi-schema-validator';
import Fastify, { type FastifyInstance } from 'fastify';
import type { TSchema } from 'typebox';
import { Compile, type Validator } from 'typebox/compile';
import { registerErrorHandling } from '../../src/api/plugins/errors.js';
import { registerKeyOrderSerializer } from '../../src/api/render/serializer.js';
import { registerOpenApi } from '../../src/api/plugins/openapi.js';
import { registerStrictNumbers } from '../../src/api/plugins/strict-numbers.js';
import {
  getAccountStxBalanceRoute,
  getPrincipalFtBalancesRoute,
  getPrincipalStxBalanceRoute,
} from '../../src/api/schemas/balances.js';
import { getContractByIdRoute } from '../../src/api/schemas/contract-info.js';
import { getNftHoldingsRoute } from '../../src/api/schemas/nft-holdings.js';
import { getAccountNoncesRoute } from '../../src/api/schemas/nonces.js';
import { formatSchemaErrors, type ValidationFailure } from '../../src/api/schemas/parameter-errors.js';
import { registerParamChecks } from '../../src/api/schemas/params.js';
import { searchByIdRoute } from '../../src/api/schemas/search.js';
import {
  getAddressMempoolTransactionsRoute,
  getMempoolTransactionListRoute,
  getTransactionListRoute,
} from '../../src/api/schemas/tx-lists.js';
import {
  getAddressTransactionEventsRoute,
  getAddressTransactionsRoute,
} from '../../src/api/schemas/v2-addresses.js';
import { getBlockTransactionsRoute, getBlocksRoute } from '../../src/api/schemas/v2-blocks.js';
import {
  getBlocksByBurnBlockRoute,
  getBurnBlockRoute,
  getBurnBlocksRoute,
} from '../../src/api/schemas/v2-burn-blocks.js';
import { beyondGoldenNames, loadGolden, type GoldenRecord } from '../support/shared.js';

// The schemas of the routes beyond the ten, held against every answer of the original API to them (the
// goldens "beyond the ten"): each recorded path reaches its route, its parameters pass the route's
// validation exactly when the original accepted them, every 200 and 404 body is the response schema's shape
// with no member missing or extra, and the serializer the server uses writes it back byte for byte (the
// original's key order). The mempool lists have no goldens: their pages are built from the pending
// transactions the original answered `/extended/v1/tx/{id}` with.

interface Route {
  url: string;
  schema: { response: Record<number, TSchema> } & Record<string, unknown>;
  preValidation?: (request: { query: unknown; params: unknown }) => Promise<void>;
}

const ROUTES: Route[] = [
  getBlocksRoute,
  getBlockTransactionsRoute,
  getBurnBlocksRoute,
  getBurnBlockRoute,
  getBlocksByBurnBlockRoute,
  getTransactionListRoute,
  getMempoolTransactionListRoute,
  getAddressMempoolTransactionsRoute,
  getAddressTransactionsRoute,
  getAddressTransactionEventsRoute,
  getAccountNoncesRoute,
  getAccountStxBalanceRoute,
  getPrincipalStxBalanceRoute,
  getPrincipalFtBalancesRoute,
  getNftHoldingsRoute,
  getContractByIdRoute,
  searchByIdRoute,
];

/** Golden records per route and status, as the capture holds them (a route without records fails here). */
const EXPECTED_COUNTS: Record<string, Record<number, number>> = {
  '/extended/v2/blocks': { 200: 42, 400: 8 },
  '/extended/v2/blocks/:height_or_hash/transactions': { 200: 241, 400: 8, 404: 79 },
  '/extended/v2/burn-blocks': { 200: 30 },
  '/extended/v2/burn-blocks/:height_or_hash': { 200: 309, 404: 24 },
  '/extended/v2/burn-blocks/:height_or_hash/blocks': { 200: 325, 400: 8, 404: 8 },
  '/extended/v1/tx': { 200: 133, 400: 16 },
  '/extended/v2/addresses/:address/transactions': { 200: 2400, 400: 8 },
  '/extended/v2/addresses/:address/transactions/:tx_id/events': { 200: 8140 },
  '/extended/v1/address/:principal/nonces': { 200: 582, 400: 8 },
  '/extended/v1/address/:principal/stx': { 200: 582 },
  '/extended/v2/addresses/:principal/balances/stx': { 200: 582 },
  '/extended/v2/addresses/:principal/balances/ft': { 200: 582 },
  '/extended/v1/tokens/nft/holdings': { 200: 582 },
  '/extended/v1/contract/:contract_id': { 200: 60, 404: 8 },
  '/extended/v1/search/:id': { 200: 936, 404: 163 },
};

/** Pending transactions among the original's answers on the generated chain (the mempool lists' items). */
const PENDING_TXS = 19;

let pendingRecords: GoldenRecord[] | undefined;

/** The original's answers to `/extended/v1/tx/{id}` for the pending transactions of the generated chain. */
function pendingTxs(): GoldenRecord[] {
  pendingRecords ??= loadGolden('generated/gen-small').filter(
    (r) =>
      r.status === 200 &&
      /^\/extended\/v1\/tx\/0x[0-9a-f]{64}$/.test(r.path) &&
      (r.body as { tx_status: string }).tx_status === 'pending',
  );
  return pendingRecords;
}

/** `schema` with every object closed: a member the schema does not name fails the check. */
function closed(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(closed);
  if (typeof schema !== 'object' || schema === null) return schema;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(schema)) {
    out[key] =
      key === 'properties'
        ? Object.fromEntries(Object.entries(value as object).map(([k, v]) => [k, closed(v)]))
        : closed(value);
  }
  if ('properties' in out) out.additionalProperties = false;
  return out;
}

/** Each route's response schemas, closed and compiled once. */
const validators = new Map<string, Validator>();
function responseValidator(route: Route, status: number): Validator {
  const key = `${route.url} ${status}`;
  let validator = validators.get(key);
  if (!validator) {
    validator = Compile(closed(route.schema.response[status]) as TSchema);
    validators.set(key, validator);
  }
  return validator;
}

/** What the handler is to answer, and what the request reached. */
interface Exchange {
  status: number;
  body: unknown;
  route?: string;
  handled: boolean;
  query?: unknown;
}

/** A server holding the routes' schemas as the API server does (server.ts): validation, errors, serializer. */
async function schemaServer(exchange: { current: Exchange }): Promise<FastifyInstance> {
  const app = Fastify({
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: 1000 },
    ajv: {
      customOptions: { coerceTypes: 'array', useDefaults: true, removeAdditional: true, verbose: true },
      plugins: [registerParamChecks],
    },
    schemaErrorFormatter: (errors, part) => formatSchemaErrors(errors as ValidationFailure[], part),
  });
  registerKeyOrderSerializer(app);
  registerErrorHandling(app);
  await registerOpenApi(app, { version: '0.0.0' });
  registerStrictNumbers(app);
  app.addHook('onRequest', async (request) => {
    exchange.current.route = request.routeOptions.url;
  });
  for (const route of ROUTES) {
    app.get(
      route.url,
      { schema: route.schema, ...(route.preValidation && { preValidation: route.preValidation }) },
      async (request, reply) => {
        exchange.current.handled = true;
        exchange.current.query = request.query;
        return reply.code(exchange.current.status).send(exchange.current.body);
      },
    );
  }
  await app.ready();
  return app;
}

const byUrl = new Map(ROUTES.map((route) => [route.url, route]));

describe('schemas of the routes beyond the ten, against the original API’s answers', () => {
  const exchange: { current: Exchange } = { current: { status: 0, body: null, handled: false } };
  let app: FastifyInstance;
  before(async () => {
    app = await schemaServer(exchange);
  });
  after(async () => {
    await app?.close();
  });

  /** Sends `path` with the handler set to answer `status` and `body`; what came back. */
  async function send(path: string, status: number, body: unknown) {
    exchange.current = { status, body, handled: false };
    const res = await app.inject({ method: 'GET', url: path });
    const { route, handled, query } = exchange.current;
    return { res, route, handled, query };
  }

  test('every golden record: its route, its parameters, its body’s shape and bytes', async () => {
    const counts: Record<string, Record<number, number>> = {};
    // per route and kind of failure: how many, and the first
    const failures: Record<string, { count: number; first: string }> = {};
    const fail = (record: GoldenRecord, what: string, route = 'no route') => {
      const kind = `${route} ${record.status}: ${what.split(':')[0]}`;
      failures[kind] ??= { count: 0, first: `${record.path}: ${what}` };
      failures[kind].count++;
    };
    for (const name of beyondGoldenNames()) {
      for (const record of loadGolden(name)) {
        const { res, route, handled } = await send(record.path, record.status, record.body);
        const schemas = route === undefined ? undefined : byUrl.get(route);
        if (!schemas || !route) {
          fail(record, `no route (${res.statusCode})`);
          continue;
        }
        const ofRoute = (counts[route] ??= {});
        ofRoute[record.status] = (ofRoute[record.status] ?? 0) + 1;
        if (record.status === 400) {
          if (handled || res.statusCode !== 400) fail(record, `accepted (${res.statusCode})`, route);
          else if (!/^(path|query) parameter /.test((res.json() as { message: string }).message)) {
            fail(record, `400 message: ${res.body}`, route);
          }
          continue;
        }
        if (!handled) {
          fail(record, `refused: ${res.statusCode} ${res.body.slice(0, 300)}`, route);
          continue;
        }
        const validator = responseValidator(schemas, record.status);
        if (!validator.Check(record.body)) {
          const [first] = validator.Errors(record.body);
          fail(record, `body does not match the schema: ${JSON.stringify(first)}`.slice(0, 500), route);
        } else if (res.body !== JSON.stringify(record.body)) {
          fail(record, `serialized differently: ${res.body.slice(0, 300)}`, route);
        }
      }
    }
    console.log(JSON.stringify(counts, null, 1));
    assert.deepEqual(failures, {});
    assert.deepEqual(counts, EXPECTED_COUNTS);
  });

  test('mempool lists: pages of the pending transactions the original answered', async () => {
    const pending = pendingTxs();
    assert.equal(pending.length, PENDING_TXS);
    const sender = (pending[0].body as { sender_address: string }).sender_address;
    const paths = [
      '/extended/v1/tx/mempool',
      `/extended/v1/tx/mempool?sender_address=${sender}&order_by=fee&order=asc&limit=50`,
      `/extended/v1/address/${sender}/mempool?offset=20&exclude_function_args=true`,
    ];
    for (const path of paths) {
      for (let offset = 0; offset < pending.length; offset += 20) {
        const page: { limit: number; offset: number; total: number; results: unknown[] } = {
          limit: 20,
          offset,
          total: pending.length,
          results: pending.slice(offset, offset + 20).map((r) => r.body),
        };
        const { res, route, handled } = await send(path, 200, page);
        assert.ok(handled, `${path}: ${res.body}`);
        const validator = responseValidator(byUrl.get(route!)!, 200);
        assert.ok(validator.Check(page), JSON.stringify([...validator.Errors(page)][0]));
        assert.equal(res.body, JSON.stringify(page));
      }
    }
  });

  test('limits, bounds and filters: what each route takes and refuses', async () => {
    const address = 'SP000000000000000000002Q6VF78';
    const txId = '0x04fb0c56f6f2f8795affd166a85ff04c003c812a3667d16ba419dff703a5d490';
    const refused: [string, string][] = [
      ['/extended/v2/blocks?offset=301', 'query parameter offset must be 300 or less; got 301'],
      ['/extended/v2/blocks?offset=-301', 'query parameter offset must be -300 or more; got -301'],
      ['/extended/v2/burn-blocks?limit=31', 'query parameter limit must be 30 or less; got 31'],
      ['/extended/v2/burn-blocks/latest/blocks?limit=31', 'query parameter limit must be 30 or less; got 31'],
      ['/extended/v2/burn-blocks/-1', 'path parameter height_or_hash must be a block height'],
      [
        '/extended/v2/blocks/latest/transactions?limit=51',
        'query parameter limit must be 50 or less; got 51',
      ],
      [
        '/extended/v2/blocks/latest/transactions?offset=-1',
        'query parameter offset must be 0 or more; got -1',
      ],
      [`/extended/v2/addresses/${address}/transactions?limit=51`, 'query parameter limit must be 50 or less'],
      [
        `/extended/v2/addresses/${address}/transactions/${txId}/events?limit=51`,
        'query parameter limit must be 50 or less; got 51',
      ],
      [
        `/extended/v2/addresses/${address}/transactions/0x12/events`,
        'path parameter tx_id must be a transaction id',
      ],
      [
        `/extended/v1/address/${address}/nonces?block_height=0`,
        'query parameter block_height must be 1 or more',
      ],
      [
        `/extended/v1/address/${address}/nonces?block_hash=12`,
        'query parameter block_hash must be a block hash',
      ],
      [
        `/extended/v2/addresses/${address}/balances/ft?limit=201`,
        'query parameter limit must be 200 or less',
      ],
      [`/extended/v2/addresses/${address}/balances/stx?include_mempool=maybe`, 'must be true or false'],
      [
        `/extended/v1/address/${address}/stx?until_block=x`,
        'query parameter until_block must be a block height',
      ],
      [
        `/extended/v1/tokens/nft/holdings?principal=${address}&limit=201`,
        'query parameter limit must be 200 or less',
      ],
      ['/extended/v1/tokens/nft/holdings', 'query parameter principal is required'],
      [
        '/extended/v1/tokens/nft/holdings?principal=SP1',
        'query parameter principal must be a Stacks address',
      ],
      ['/extended/v1/tx?limit=51', 'query parameter limit must be 50 or less; got 51'],
      ['/extended/v1/tx?type=coinbase,nonsense', 'query parameter type must be one of "coinbase"'],
      ['/extended/v1/tx/mempool?limit=51', 'query parameter limit must be 50 or less; got 51'],
      [
        '/extended/v1/tx/mempool?order_by=height',
        'query parameter order_by must be one of "age", "size", "fee"',
      ],
      ['/extended/v1/tx/mempool?order=up', 'query parameter order must be one of "asc", "desc"'],
      [
        '/extended/v1/tx/mempool?sender_address=SP000000000000000000002Q6VF79',
        'sender_address must be a Stacks address',
      ],
      [
        `/extended/v1/address/${address}/mempool?limit=51`,
        'query parameter limit must be 50 or less; got 51',
      ],
      [
        '/extended/v1/search/x?include_metadata=maybe',
        'query parameter include_metadata must be true or false',
      ],
    ];
    for (const [path, message] of refused) {
      const { res, handled } = await send(path, 200, {});
      assert.equal(res.statusCode, 400, `${path}: ${res.body}`);
      assert.ok(!handled, path);
      const body = res.json() as { statusCode: number; error: string; message: string };
      assert.equal(body.error, 'Bad Request');
      assert.ok(body.message.includes(message), `${path}: ${body.message}`);
    }
    // defaults filled in, lists split at commas
    const taken: [string, Record<string, unknown>][] = [
      ['/extended/v2/blocks', { limit: 20, offset: 0 }],
      ['/extended/v2/blocks?offset=-300&cursor=0xab', { limit: 20, offset: -300, cursor: '0xab' }],
      ['/extended/v2/burn-blocks', { limit: 20, offset: 0 }],
      [
        '/extended/v1/tx?type=coinbase,contract_call',
        {
          limit: 20,
          offset: 0,
          type: ['coinbase', 'contract_call'],
          unanchored: false,
          exclude_function_args: false,
        },
      ],
      [
        '/extended/v1/tx?type=coinbase&type=tenure_change',
        {
          limit: 20,
          offset: 0,
          type: ['coinbase', 'tenure_change'],
          unanchored: false,
          exclude_function_args: false,
        },
      ],
      [
        '/extended/v1/tx/mempool',
        {
          order_by: 'age',
          order: 'desc',
          limit: 20,
          offset: 0,
          unanchored: false,
          exclude_function_args: false,
        },
      ],
      [`/extended/v2/addresses/${address}/balances/ft`, { limit: 100, offset: 0 }],
      [
        `/extended/v1/tokens/nft/holdings?principal=${address}&asset_identifiers=a::b,c::d`,
        {
          principal: address,
          asset_identifiers: ['a::b', 'c::d'],
          limit: 50,
          offset: 0,
          unanchored: false,
          tx_metadata: false,
        },
      ],
      [`/extended/v1/address/${address}/nonces?block_height=1`, { block_height: 1 }],
      ['/extended/v1/search/anything', { include_metadata: false }],
    ];
    for (const [path, query] of taken) {
      const {
        res,
        handled,
        query: seen,
      } = await send(path, 404, { statusCode: 404, error: 'Not Found', message: 'x' });
      assert.ok(handled, `${path}: ${res.body}`);
      assert.deepEqual({ ...(seen as object) }, query, path);
    }
  });

  test('/doc: each route an operation, every parameter described with an example', async () => {
    type Operation = {
      operationId: string;
      parameters?: { name: string; description?: string; example?: unknown }[];
      responses: Record<string, unknown>;
    };
    const doc = app.swagger() as unknown as { paths: Record<string, { get?: Operation }> };
    const result = await new OpenApiValidator().validate(doc as never);
    assert.deepEqual(result.errors, undefined);
    const operations = ROUTES.map((route) => {
      const path = route.url.replace(/:(\w+)/g, '{$1}');
      const operation = doc.paths[path]?.get;
      assert.ok(operation, path);
      for (const p of operation.parameters ?? []) {
        assert.ok(p.description, `${path} ${p.name}: no description`);
        assert.notEqual(p.example, undefined, `${path} ${p.name}: no example`);
      }
      assert.ok(operation.responses['200'], path);
      return operation.operationId;
    });
    assert.equal(new Set(operations).size, ROUTES.length);
  });

  test('search: the pending answers the goldens lack keep their own key order', async () => {
    const bodies = pendingTxs().map((r) => {
      const tx = r.body as { tx_id: string; tx_type: string };
      return {
        found: true,
        result: { entity_id: tx.tx_id, entity_type: 'mempool_tx_id', tx_data: { tx_type: tx.tx_type } },
      };
    });
    // a contract whose deploy is pending: its tx_data holds the type and id only
    const [deployed] = loadGolden('generated/gen-small-beyond').filter(
      (r) =>
        r.status === 200 &&
        r.path.startsWith('/extended/v1/search/') &&
        (r.body as { result: { entity_type: string } }).result.entity_type === 'contract_address',
    );
    const { result } = deployed.body as {
      result: { entity_id: string; tx_data: { tx_type: string; tx_id: string } };
    };
    const pendingDeploy = {
      found: true,
      result: {
        entity_id: result.entity_id,
        entity_type: 'contract_address',
        tx_data: { tx_type: result.tx_data.tx_type, tx_id: result.tx_data.tx_id },
      },
    };
    const searched = [...bodies, pendingDeploy, deployed.body as typeof pendingDeploy];
    for (const body of searched) {
      const { res, handled } = await send(`/extended/v1/search/${body.result.entity_id}`, 200, body);
      assert.ok(handled);
      assert.ok(responseValidator(searchByIdRoute, 200).Check(body), JSON.stringify(body));
      assert.equal(res.body, JSON.stringify(body));
    }
    assert.equal(bodies.length, PENDING_TXS);
  });
});
