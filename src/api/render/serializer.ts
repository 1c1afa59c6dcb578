import fastJsonStringify from 'fast-json-stringify';
import type { FastifyInstance } from 'fastify';
import type { Static, TSchema } from 'typebox';

// Answers are written by the compiled serializer of their response schema, and their keys must come in the
// original API's order (clients diff and hash the text; the conformance test compares the order too).
// fast-json-stringify writes an object's required properties first and the optional ones after them
// (7.3.6: `{a, b?, c}` comes out a, c, b), so a shape whose optional members sit between required ones (a
// balance's pending members, an FT event's `asset_id`, a sponsored tx's sponsor members) would come out in
// another order. The serializer is therefore given the schemas without `required`: it then writes every
// property present in the schema's order and leaves out the absent ones. Presence is kept by the render
// functions' types, and the OpenAPI document keeps `required` (it reads the schemas, not this copy).
//
// Kept: `required` on the branches of an `anyOf` of several objects, which is how the serializer tells the
// branches apart (no such union is serialized by Fastify's choice today: the handlers that answer one of
// several shapes name the schema of the one they write).

type Schema = Record<string, unknown>;

function isObjectSchema(schema: unknown): boolean {
  return typeof schema === 'object' && schema !== null && (schema as Schema).type === 'object';
}

/** A copy of `schema` without `required`, but on the branches that tell an `anyOf` of objects apart. */
function withoutRequired(schema: unknown, keepRequired = false): unknown {
  if (Array.isArray(schema)) return schema.map((s) => withoutRequired(s));
  if (typeof schema !== 'object' || schema === null) return schema;
  const out: Schema = {};
  for (const [key, value] of Object.entries(schema)) {
    if (key === 'required' && !keepRequired) continue;
    if (key === 'anyOf' || key === 'oneOf') {
      const branches = value as unknown[];
      const discriminated = branches.filter(isObjectSchema).length > 1;
      out[key] = branches.map((branch) => withoutRequired(branch, discriminated));
    } else if (key === 'properties' || key === 'patternProperties') {
      out[key] = Object.fromEntries(
        Object.entries(value as Schema).map(([name, property]) => [name, withoutRequired(property)]),
      );
    } else {
      out[key] = withoutRequired(value);
    }
  }
  return out;
}

/** The compiled serializer of `schema`, writing the keys in the schema's order. */
function compile(schema: unknown): (value: unknown) => string {
  return fastJsonStringify(withoutRequired(schema) as object);
}

/**
 * The serializer of an answer's schema, compiled once (at module load, beside the schema's users): the answer
 * modules write their JSON text with it, Fastify's response serializer being the same function of the same
 * schema.
 */
export function serializerOf<Schema extends TSchema>(schema: Schema): (value: Static<Schema>) => string {
  return compile(schema);
}

/** Every response of `app` (routes registered after this) is written with its keys in the schema's order. */
export function registerKeyOrderSerializer(app: FastifyInstance): void {
  app.setSerializerCompiler(({ schema }) => compile(schema));
}
