import type { FastifyInstance, FastifyRequest, RouteOptions } from 'fastify';
import { ParameterError, isDisguisedNumber } from '../schemas/params.js';

// A numeric path or query parameter written as hex, with an exponent or blank is a 400 before Ajv's
// coercion can read it as a number (see isDisguisedNumber in schemas/params.ts).

type Part = 'params' | 'query';
const PARTS: [Part, 'params' | 'querystring'][] = [
  ['params', 'params'],
  ['query', 'querystring'],
];

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
          throw new ParameterError(`${name} must be a decimal integer, got "${value}"`);
        }
      }
    };
    const existing = route.preValidation;
    route.preValidation = existing === undefined ? [check] : [...[existing].flat(), check];
  });
}
