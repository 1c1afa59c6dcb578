import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import Fastify from 'fastify';
import Type from 'typebox';
import { registerKeyOrderSerializer } from '../../src/api/render/serializer.js';

// Answers keep their schema's key order: an optional member between required ones stays where the schema has
// it (the serializer alone would write it after them), and a union of objects still picks its branch.

describe('response key order', () => {
  test('keys come in schema order, optional ones included; unions still pick their branch', async () => {
    const app = Fastify();
    registerKeyOrderSerializer(app);
    const Balance = Type.Object({
      balance: Type.String(),
      pending: Type.Optional(Type.String()),
      total: Type.String(),
    });
    const Either = Type.Union([
      Type.Object({ kind: Type.Literal('mined'), height: Type.Integer() }),
      Type.Object({
        kind: Type.Literal('pending'),
        receipt: Type.Integer(),
        note: Type.Optional(Type.String()),
      }),
    ]);
    app.get('/balance', { schema: { response: { 200: Balance } } }, async (request) =>
      'without' in (request.query as object)
        ? { total: '3', balance: '1' }
        : { total: '3', balance: '1', pending: '2' },
    );
    app.get('/either', { schema: { response: { 200: Type.Array(Either) } } }, async () => [
      { receipt: 7, kind: 'pending' },
      { height: 5, kind: 'mined' },
    ]);
    try {
      assert.equal((await app.inject('/balance')).body, '{"balance":"1","pending":"2","total":"3"}');
      assert.equal((await app.inject('/balance?without')).body, '{"balance":"1","total":"3"}');
      assert.equal(
        (await app.inject('/either')).body,
        '[{"kind":"pending","receipt":7},{"kind":"mined","height":5}]',
      );
    } finally {
      await app.close();
    }
  });
});
