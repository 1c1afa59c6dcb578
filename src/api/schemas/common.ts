import Type, { type TSchema } from 'typebox';

export const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);

/** A 32-byte hash or tx id, `0x` optional (as upstream's route patterns accept). */
export const HASH_PATTERN = '^(0x)?[a-fA-F0-9]{64}$';

const ErrorResponse = Type.Object(
  {
    statusCode: Type.Integer(),
    code: Type.Optional(Type.String()),
    error: Type.String(),
    message: Type.String(),
  },
  { title: 'ErrorResponse', description: 'Every error answer: the HTTP status, its name and what was wrong' },
);

/** Error answers a route may give, for its `schema.response`. */
export const errorResponses = {
  400: ErrorResponse,
  404: ErrorResponse,
  503: ErrorResponse,
} as const;

/** The largest PostgreSQL integer: the largest height, index or offset the index can hold. */
export const MAX_INT = 2_147_483_647;

export function isoTime(unixSeconds: number): string {
  return new Date(unixSeconds * 1000).toISOString();
}

/** Upstream renders times ≤ 0 (unknown) as an empty ISO string. */
export function isoTimeOrEmpty(unixSeconds: number): string {
  return unixSeconds > 0 ? isoTime(unixSeconds) : '';
}
