import type { TSchema } from 'typebox';
import type { FastifyReply } from 'fastify';

const JSON_TYPE = 'application/json; charset=utf-8';

/**
 * An already serialized JSON body, text or its UTF-8 bytes, as the answer of an async handler (`return
 * jsonAnswer<Shape>(reply, json)`), for answers written by a chosen schema's compiled serializer
 * (`serializeWith`) or put together from kept JSON text: Fastify sends a string or Buffer of this type as it
 * is, and the handler's answer is typed as the schema's value it is the serialization of. Not
 * `return reply.send(json)`: the handler's promise would adopt the reply, a thenable that settles only once the
 * response is written, which costs an end-of-stream listener on every response (`eos` under `Reply.then`, ~1 KB
 * of allocations a request in the heap profile of block by burn height on the 1M chain).
 */
export function jsonAnswer<Shape>(reply: FastifyReply, json: string | Buffer): Shape {
  reply.type(JSON_TYPE);
  return json as unknown as Shape;
}

/** `value` written by the compiled serializer of `schema` (Fastify's, kept per schema). */
export function serializeWith(reply: FastifyReply, schema: TSchema, value: object): string {
  return reply.serializeInput(value as Record<string, unknown>, schema as Record<string, unknown>);
}
