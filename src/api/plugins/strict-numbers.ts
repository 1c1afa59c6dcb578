import type { FastifyInstance, FastifyRequest, RouteOptions } from 'fastify';
import { ParameterError } from '../schemas/parameter-errors.js';
import { isDisguisedNumber } from '../schemas/params.js';

// A numeric path or query parameter written as hex, with an exponent or blank is a 400 before Ajv's
// coercion can read it as a number (see isDisguisedNumber in schemas/params.ts). So is one written in more
// digits than a double holds (over 308): Ajv coerces it to Infinity, which passes its `maximum` and reached
// the database as a value it refused (a 500 the fuzz test found).

type Part = 'params' | 'query';
const PARTS: [Part, 'params' | 'querystring'][] = [
  ['params', 'params'],
  ['query', 'querystring'],
];

type Field = [Part, string, 'params' | 'querystring', { minimum?: number; maximum?: number }];

function numericFields(schema: RouteOptions['schema']): Field[] {
  const fields: Field[] = [];
  for (const [part, schemaKey] of PARTS) {
    const properties = (
      schema?.[schemaKey] as
        { properties?: Record<string, { type?: unknown; minimum?: number; maximum?: number }> } | undefined
    )?.properties;
    for (const [key, property] of Object.entries(properties ?? {})) {
      if (property.type === 'integer' || property.type === 'number') {
        fields.push([part, key, schemaKey, property]);
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
      for (const [part, key, schemaKey, property] of fields) {
        const value = (request[part] as Record<string, unknown> | undefined)?.[key];
        if (typeof value !== 'string') continue;
        if (isDisguisedNumber(value)) {
          throw new ParameterError(schemaKey, key, 'must be a whole number written in decimal digits', value);
        }
        if (/^-?\d+(\.\d+)?$/.test(value) && !Number.isFinite(Number(value))) {
          const { minimum, maximum } = property;
          const bound = value.startsWith('-')
            ? minimum === undefined
              ? 'a finite number'
              : `${minimum} or more`
            : maximum === undefined
              ? 'a finite number'
              : `${maximum} or less`;
          throw new ParameterError(schemaKey, key, `must be ${bound}`, `${value.slice(0, 20)}…`);
        }
      }
    };
    const existing = route.preValidation;
    route.preValidation = existing === undefined ? [check] : [...[existing].flat(), check];
  });
}
