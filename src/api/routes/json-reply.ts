import type { TSchema } from 'typebox';
import type { FastifyReply } from 'fastify';

/**
 * Sends an already serialized JSON body (Fastify sends a string of this type as it is). For answers written
 * by a chosen schema's compiled serializer (`serializeWith`), or put together from kept JSON text.
 */
export function sendJson(reply: FastifyReply, json: string) {
  return reply.type('application/json; charset=utf-8').send(json);
}

/** `value` written by the compiled serializer of `schema` (Fastify's, kept per schema). */
export function serializeWith(reply: FastifyReply, schema: TSchema, value: object): string {
  return reply.serializeInput(value as Record<string, unknown>, schema as Record<string, unknown>);
}
