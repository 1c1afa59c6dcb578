import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { routeSchemas } from '../../src/api/plugins/openapi.js';
import { startTestApi, type TestApi } from '../support/api.js';
import { stopOwnCluster } from '../support/database.js';

// Every parameter of every route, given values it refuses: the 400 says in words which parameter, where,
// what is wrong and what it got, never Ajv's own text (a regular expression, "anyOf", "constant").

after(stopOwnCluster);

interface Property {
  type?: string;
  pattern?: string;
  anyOf?: unknown[];
  minimum?: number;
  maximum?: number;
  maxItems?: number;
  items?: Property;
  examples?: unknown[];
  'x-check'?: string;
}
interface ObjectSchema {
  properties?: Record<string, Property>;
  required?: string[];
}

/** Ajv's phrases, and the `querystring/` or `params/` prefix of its messages. */
const AJV_TEXT =
  /must match pattern|must match a schema in anyOf|must be equal to constant|must have required property|must NOT have|must be integer|must be boolean|must be [<>]=|querystring\/|params\//;

/** Values a parameter's schema refuses, each with what the message must say of it. */
function refusedValues(property: Property): { value: string | string[]; says: RegExp }[] {
  const refused: { value: string | string[]; says: RegExp }[] = [];
  if (property.type === 'integer') {
    refused.push({ value: 'abc', says: /must be a whole number; got "abc"$/ });
    refused.push({ value: '1.5', says: /must be a whole number; got "1\.5"$/ });
    refused.push({ value: '0x10', says: /must be a whole number written in decimal digits; got "0x10"$/ });
    // more digits than a double holds: Ajv would read Infinity, which passes `maximum`
    refused.push({
      value: '9'.repeat(400),
      says: new RegExp(`must be ${property.maximum ?? 'a finite number'}( or less)?; got "9+…"$`),
    });
    if (property.minimum !== undefined) {
      const below = property.minimum - 1;
      refused.push({
        value: String(below),
        says: new RegExp(`must be ${property.minimum} or more; got ${below}$`),
      });
    }
    if (property.maximum !== undefined && property.maximum < Number.MAX_SAFE_INTEGER) {
      const above = property.maximum + 1;
      refused.push({
        value: String(above),
        says: new RegExp(`must be ${property.maximum} or less; got ${above}$`),
      });
    }
  } else if (property.type === 'boolean') {
    refused.push({ value: 'maybe', says: /must be true or false; got "maybe"$/ });
  } else if (property.pattern || property.anyOf || property['x-check'] || property.items?.pattern) {
    refused.push({ value: 'no-such-thing', says: /must (be|start) .*; got .*no-such-thing/ });
  }
  if (property.maxItems !== undefined) {
    const example = (property.examples?.[0] as string[])[0];
    refused.push({
      value: Array.from({ length: property.maxItems + 1 }, () => example),
      says: new RegExp(`must be given at most ${property.maxItems} values; got ${property.maxItems + 1}$`),
    });
  }
  return refused;
}

const example = (property: Property) => property.examples?.[0] as string | number | string[];

function query(values: Record<string, unknown>): string {
  const pairs = Object.entries(values).flatMap(([name, value]) =>
    [value].flat().map((v) => `${name}=${encodeURIComponent(String(v))}`),
  );
  return pairs.length ? `?${pairs.join('&')}` : '';
}

describe('bad parameters are told in words', () => {
  let api: TestApi;
  before(async () => {
    api = await startTestApi({ engine: 'postgres' });
  });
  after(() => api?.close());

  test('every path and query parameter of every route', async () => {
    let cases = 0;
    for (const [route, schema] of routeSchemas(api.app)) {
      const [method, template] = route.split(' ');
      if (method !== 'GET') continue;
      const params = (schema.params as ObjectSchema | undefined)?.properties ?? {};
      const querystring = schema.querystring as ObjectSchema | undefined;
      const queryProperties = querystring?.properties ?? {};
      const requiredQuery = Object.fromEntries(
        (querystring?.required ?? [])
          .filter((name) => queryProperties[name].examples && !('default' in queryProperties[name]))
          .map((name) => [name, example(queryProperties[name])]),
      );
      const url = (pathValues: Record<string, unknown>, queryValues: Record<string, unknown>) =>
        template.replace(/:([a-z_]+)/g, (_, name: string) =>
          encodeURIComponent(String(pathValues[name] ?? example(params[name]))),
        ) + query(queryValues);

      const ask = async (path: string, part: 'path' | 'query', name: string, says: RegExp) => {
        const res = await api.app.inject({ method: 'GET', url: path });
        const body = res.json<{ statusCode: number; code?: string; error: string; message: string }>();
        assert.equal(res.statusCode, 400, `${path}: ${res.body.slice(0, 200)}`);
        assert.deepEqual(
          [body.statusCode, body.code, body.error],
          [400, 'FST_ERR_VALIDATION', 'Bad Request'],
          path,
        );
        assert.ok(body.message.startsWith(`${part} parameter ${name} `), `${path}: ${body.message}`);
        assert.match(body.message, says, path);
        assert.doesNotMatch(body.message, AJV_TEXT, path);
        cases += 1;
      };

      // the route answers its examples: each refusal below is about the one parameter changed
      const valid = await api.app.inject({ method: 'GET', url: url({}, requiredQuery) });
      assert.notEqual(valid.statusCode, 400, `${template} with its examples: ${valid.body.slice(0, 200)}`);

      for (const [name, property] of Object.entries(params)) {
        for (const { value, says } of refusedValues(property)) {
          await ask(url({ [name]: value }, requiredQuery), 'path', name, says);
        }
      }
      for (const [name, property] of Object.entries(queryProperties)) {
        for (const { value, says } of refusedValues(property)) {
          await ask(url({}, { ...requiredQuery, [name]: value }), 'query', name, says);
        }
        if (name in requiredQuery) {
          const { [name]: _left, ...others } = requiredQuery;
          await ask(url({}, others), 'query', name, /is required: .+/);
        }
      }
    }
    assert.ok(cases >= 50, `${cases} refusals checked`);
  });
});
