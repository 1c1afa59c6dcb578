import type { FastifyInstance, FastifyRequest, RouteOptions } from 'fastify';
import { ParameterError } from '../schemas/parameter-errors.js';
import { isDisguisedNumber } from '../schemas/params.js';

// A numeric path or query parameter written as hex, with an exponent or blank is a 400 before Ajv's
// coercion can read it as a number (see isDisguisedNumber in schemas/params.ts).

type Part = 'params' | 'query';
const PARTS: [Part, 'params' | 'querystring'][] = [
  ['params', 'params'],
  ['query', 'querystring'],
];

function numericFields(schema: RouteOptions['schema']): [Part, string, 'params' | 'querystring'][] {
  const fields: [Part, string, 'params' | 'querystring'][] = [];
  for (const [part, schemaKey] of PARTS) {
    const properties = (
      schema?.[schemaKey] as { properties?: Record<string, { type?: unknown }> } | undefined
    )?.properties;
    for (const [key, property] of Object.entries(properties ?? {})) {
      if (property.type === 'integer' || property.type === 'number') {
        fields.push([part, key, schemaKey]);
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
      for (const [part, key, schemaKey] of fields) {
        const value = (request[part] as Record<string, unknown> | undefined)?.[key];
        if (typeof value === 'string' && isDisguisedNumber(value)) {
          throw new ParameterError(schemaKey, key, 'must be a whole number written in decimal digits', value);
        }
      }
    };
    const existing = route.preValidation;
    route.preValidation = existing === undefined ? [check] : [...[existing].flat(), check];
  });
}
