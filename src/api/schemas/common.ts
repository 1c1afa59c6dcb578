import Type, { type TSchema } from 'typebox';

export const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);

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
