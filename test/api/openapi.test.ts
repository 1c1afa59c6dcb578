import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { Validator } from '@seriousme/openapi-schema-validator';
import YAML from 'yaml';
import { buildOpenApiDocument, openApiYaml } from '../../scripts/openapi-document.js';
import { AccessCounters } from '../../src/metrics.js';
import { DEPRECATION_WARNING } from '../../src/api/plugins/conventions.js';
import { packageVersion } from '../../src/version.js';
import { CONTRACT_ENDPOINTS } from '../support/contract.js';
import { startTestApi, type TestApi } from '../support/api.js';
import { stopOwnCluster } from '../support/database.js';

after(stopOwnCluster);

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const committedYaml = () => readFileSync(new URL('../../docs/openapi.yaml', import.meta.url), 'utf8');

describe('OpenAPI document', () => {
  let api: TestApi;
  let baseUrl: string;
  let doc: Json;

  before(async () => {
    api = await startTestApi({
      engine: 'postgres',
      listen: true,
      // Keys required: the document and the docs page must still be served without one.
      accessControl: {
        apiKeysRequired: true,
        rateLimitEnabled: true,
        anonymousLimit: 50,
        keyedLimit: 500,
        trustedProxies: [],
        counters: new AccessCounters(),
      },
    });
    baseUrl = api.baseUrl;
    const res = await fetch(`${baseUrl}/openapi.json`);
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /^application\/json/);
    doc = (await res.json()) as Json;
  });

  after(async () => {
    await api?.close();
  });

  test('GET /openapi.json over HTTP is a valid OpenAPI 3.1 document', async () => {
    const validator = new Validator();
    const result = await validator.validate(doc);
    assert.deepEqual(result.errors, undefined);
    assert.equal(result.valid, true);
    assert.equal(validator.version, '3.1');
    assert.equal(doc.openapi, '3.1.0');
    assert.equal(doc.info.title, 'Stacks read API');
    assert.equal(doc.info.version, packageVersion());
  });

  test('the committed docs/openapi.yaml is what `npm run openapi` generates now', async () => {
    const generated = openApiYaml(await buildOpenApiDocument());
    assert.ok(
      committedYaml() === generated,
      'docs/openapi.yaml is out of date with the route schemas: run `npm run openapi` and commit it',
    );
    // The file is the same document the server serves.
    assert.deepEqual(YAML.parse(committedYaml()), doc);
  });

  test('declares the optional X-API-Key scheme, with 401/403/429 on limited operations only', () => {
    assert.deepEqual(doc.components.securitySchemes.ApiKey, {
      type: 'apiKey',
      in: 'header',
      name: 'X-API-Key',
      description: doc.components.securitySchemes.ApiKey.description,
    });
    assert.deepEqual(doc.security, [{}, { ApiKey: [] }]);
    const status = doc.paths['/extended'].get;
    for (const code of ['401', '403', '429']) {
      assert.equal(
        status.responses[code].content['application/json'].schema.$ref,
        '#/components/schemas/ErrorResponse',
      );
    }
    assert.deepEqual(Object.keys(status.responses['429'].headers), [
      'RateLimit-Limit',
      'RateLimit-Remaining',
      'RateLimit-Reset',
      'Retry-After',
    ]);
    for (const path of ['/health', '/ready']) {
      const op = doc.paths[path].get;
      assert.deepEqual(op.security, [], path);
      assert.equal(op.responses['401'], undefined, path);
      assert.equal(op.responses['429'], undefined, path);
    }
    assert.deepEqual(Object.keys(doc.paths['/ready'].get.responses), ['200', '503']);
    // Service routes of the docs themselves are not operations.
    for (const hidden of ['/', '/openapi.json', '/doc', '/doc/json', '/doc/static/{*}']) {
      assert.equal(doc.paths[hidden], undefined, hidden);
    }
  });

  test('a query parameter with a default is optional; required ones are those a request must send', () => {
    const required: string[] = [];
    for (const [path, item] of Object.entries(doc.paths as Json)) {
      for (const parameter of (item.get?.parameters ?? []) as Json[]) {
        if (parameter.in !== 'query') continue;
        const where = `${path} ?${parameter.name}`;
        if (parameter.schema.default !== undefined) assert.notEqual(parameter.required, true, where);
        if (parameter.required) required.push(where);
      }
    }
    assert.deepEqual(required.sort(), [
      '/extended/v1/tokens/nft/holdings ?principal',
      '/extended/v1/tx/multiple ?tx_id',
      '/extended/v2/smart-contracts/status ?contract_id',
    ]);
    const [limit] = doc.paths[
      '/extended/v1/address/{principal}/transactions_with_transfers'
    ].get.parameters.filter((p: Json) => p.name === 'limit');
    assert.deepEqual([limit.required, limit.schema.default], [false, 20]);
  });

  test('error answers share one ErrorResponse component', () => {
    assert.deepEqual(doc.components.schemas.ErrorResponse.required, ['statusCode', 'error', 'message']);
    const block = doc.paths['/extended/v2/blocks/{height_or_hash}'].get;
    assert.equal(block.responses['400'].description.startsWith('Invalid request'), true);
    assert.equal(
      block.responses['404'].content['application/json'].schema.$ref,
      '#/components/schemas/ErrorResponse',
    );
    assert.equal(block.responses['503'].description, 'The database is unavailable');
    assert.equal(
      block.responses['200'].content['application/json'].schema.$ref,
      '#/components/schemas/BlockV2',
    );
    assert.deepEqual(doc.components.schemas.BlockV2.required.slice(0, 3), ['canonical', 'height', 'hash']);
  });

  for (const endpoint of CONTRACT_ENDPOINTS) {
    test(`documents ${endpoint.section} GET ${endpoint.path}`, () => {
      const op = doc.paths[endpoint.path]?.get;
      assert.ok(op, `${endpoint.path} is not in the document`);
      assert.equal(typeof op.operationId, 'string');
      assert.equal(typeof op.summary, 'string');
      assert.equal(op.deprecated === true, endpoint.deprecated);
      const names = (op.parameters ?? []).map((p: Json) => p.name);
      for (const param of endpoint.params)
        assert.ok(names.includes(param), `parameter ${param} of ${endpoint.path}`);
      for (const p of op.parameters ?? []) {
        if (p.in === 'path') assert.equal(p.required, true, `path parameter ${p.name}`);
      }
      assert.ok(op.responses['200'].content['application/json'].schema, '200 has a body schema');
      for (const code of ['400', '401', '403', '429']) assert.ok(op.responses[code], `${code} documented`);
      if (endpoint.deprecated) {
        assert.match(
          op.responses['200'].headers.Warning.description,
          new RegExp(DEPRECATION_WARNING.slice(0, 3)),
        );
      } else {
        assert.equal(op.responses['200'].headers?.Warning, undefined);
      }
    });
  }

  test('/openapi.json and /doc need no key even where keys are required; the API does', async () => {
    const plain = await fetch(`${baseUrl}/extended`);
    assert.equal(plain.status, 401);
    for (const path of ['/openapi.json', '/doc', '/doc/static/swagger-ui-bundle.js', '/health', '/ready']) {
      const res = await fetch(`${baseUrl}${path}`, { redirect: 'manual' });
      assert.equal(res.status, 200, path);
      await res.arrayBuffer();
    }
  });

  test('the bare server address redirects to the docs page, without a key', async () => {
    const res = await fetch(`${baseUrl}/`, { redirect: 'manual' });
    assert.equal(res.status, 302);
    assert.equal(res.headers.get('location'), '/doc');
  });

  test('/doc is Swagger UI from the package files, pointed at this document, with no outside URL', async () => {
    const html = await (await fetch(`${baseUrl}/doc`)).text();
    assert.match(html, /<title>Stacks read API — reference<\/title>/);
    const scripts = [...html.matchAll(/<script src="([^"]+)"/g)].map((m) => m[1]);
    assert.deepEqual(scripts, [
      '/doc/static/swagger-ui-bundle.js',
      '/doc/static/swagger-ui-standalone-preset.js',
      '/doc/static/swagger-initializer.js',
    ]);
    assert.doesNotMatch(html, /https?:\/\//);
    const init = await (await fetch(`${baseUrl}/doc/static/swagger-initializer.js`)).text();
    assert.match(init, /resolveUrl\('\.\/json'\)/);
    assert.match(init, /validatorUrl: null/);
    const served = (await (await fetch(`${baseUrl}/doc/json`)).json()) as Json;
    assert.deepEqual(served, doc);
  });
});
