import type { FastifyInstance, FastifyRequest, RouteOptions } from 'fastify';
import { InvalidRequestError } from '../../errors.js';

// Ajv's type coercion turns every string JavaScript reads as a number into one: `0x10` → 16, `1e3` → 1000,
// ` ` → 0. A height, limit or offset written that way is a mistake, not a number; this check makes it a
// 400 before validation. Plain decimals (and what Ajv rejects itself, like `abc` or `1.5`) are left to the
// schema, so its messages stay upstream's.

type Part = 'params' | 'query';
const PARTS: [Part, 'params' | 'querystring'][] = [
  ['params', 'params'],
  ['query', 'querystring'],
];
const PLAIN = /^-?\d+(\.\d+)?$/;

/** True for a string Ajv would coerce to a number although it is not written as a decimal. */
export function isDisguisedNumber(value: string): boolean {
  return !PLAIN.test(value) && value !== '' && !Number.isNaN(Number(value));
}

function numericFields(schema: RouteOptions['schema']): [Part, string, string][] {
  const fields: [Part, string, string][] = [];
  for (const [part, schemaKey] of PARTS) {
    const properties = (
      schema?.[schemaKey] as { properties?: Record<string, { type?: unknown }> } | undefined
    )?.properties;
    for (const [key, property] of Object.entries(properties ?? {})) {
      if (property.type === 'integer' || property.type === 'number') {
        fields.push([part, key, `${schemaKey}/${key}`]);
      }
    }
  }
  return fields;
}

/** Adds the check to every route that takes a numeric path or query parameter. */
export function registerStrictNumbers(app: FastifyInstance) {
  app.addHook('onRoute', (route) => {
    const fields = numericFields(route.schema);
    if (fields.length === 0) return;
    const check = async (request: FastifyRequest) => {
      for (const [part, key, name] of fields) {
        const value = (request[part] as Record<string, unknown> | undefined)?.[key];
        if (typeof value === 'string' && isDisguisedNumber(value)) {
          throw new InvalidRequestError(`${name} must be a decimal integer, got "${value}"`);
        }
      }
    };
    const existing = route.preValidation;
    route.preValidation = existing === undefined ? [check] : [...[existing].flat(), check];
  });
}
