// How a bad parameter is told: `<path|query> parameter <name> <what is wrong>; got <value>`, in words, for
// schema validation (Fastify's `schemaErrorFormatter`, from Ajv's errors) and for the checks that run
// before it (ParameterError) alike. A pattern or a union cannot be read by a person, so a parameter that
// has one says what it accepts in its `x-expects` annotation (schemas/params.ts).

/** Where a parameter is, as Fastify names the parts of a request and as a person reads them. */
const PART_WORDS: Record<string, string> = {
  params: 'path parameter',
  querystring: 'query parameter',
  query: 'query parameter',
};

/** Longest value quoted back; a longer one is cut. */
const SHOWN_LENGTH = 80;

function shown(value: unknown): string {
  if (Array.isArray(value)) return value.map(shown).join(', ');
  if (typeof value !== 'string') return JSON.stringify(value);
  return JSON.stringify(value.length > SHOWN_LENGTH ? `${value.slice(0, SHOWN_LENGTH)}…` : value);
}

/** The message about one parameter: where it is, its name, what is wrong, and the value received. */
function parameterMessage(part: string, name: string, problem: string, value?: unknown): string {
  const got = value === undefined ? '' : `; got ${shown(value)}`;
  return `${PART_WORDS[part] ?? part} ${name} ${problem}${got}`;
}

/**
 * A bad parameter found before schema validation (Ajv's coercion would hide it): the same 400 body as a
 * schema error (plugins/errors.ts answers every error with `validation` alike).
 */
export class ParameterError extends Error {
  readonly statusCode = 400;
  readonly validation: { message: string }[];
  constructor(part: 'params' | 'querystring', name: string, problem: string, value: unknown) {
    const message = parameterMessage(part, name, problem, value);
    super(message);
    this.validation = [{ message }];
  }
}

/** What Ajv reports of a failure, with `verbose` on (the schema and the value concerned). */
export interface ValidationFailure {
  keyword: string;
  instancePath: string;
  params: Record<string, unknown>;
  message?: string;
  parentSchema?: Record<string, unknown>;
  data?: unknown;
}

const TYPE_WORDS: Record<string, string> = {
  integer: 'must be a whole number',
  number: 'must be a number',
  boolean: 'must be true or false',
  string: 'must be text',
  array: 'must be a list of values',
};

const plural = (n: number, what: string) => `${n} ${what}${n === 1 ? '' : 's'}`;

/** What is wrong, in words, and the value to quote back (none where the words hold it). */
function describe(failure: ValidationFailure): { problem: string; value?: unknown } {
  const { keyword, params, parentSchema = {}, data } = failure;
  const expects = parentSchema['x-expects'] as string | undefined;
  const limit = params.limit as number;
  switch (keyword) {
    case 'required': {
      const property = (parentSchema.properties as Record<string, Record<string, unknown>> | undefined)?.[
        params.missingProperty as string
      ];
      const wanted = property?.['x-expects'];
      return { problem: wanted ? `is required: ${wanted as string}` : 'is required' };
    }
    case 'type':
      return {
        problem: TYPE_WORDS[params.type as string] ?? `must be of type ${String(params.type)}`,
        value: data,
      };
    case 'minimum':
      return { problem: `must be ${limit} or more`, value: data };
    case 'exclusiveMinimum':
      return { problem: `must be more than ${limit}`, value: data };
    case 'maximum':
      return { problem: `must be ${limit} or less`, value: data };
    case 'exclusiveMaximum':
      return { problem: `must be less than ${limit}`, value: data };
    case 'minItems':
      return { problem: `must be given at least ${plural(limit, 'value')}` };
    case 'maxItems':
      return {
        problem: `must be given at most ${plural(limit, 'value')}; got ${(data as unknown[]).length}`,
      };
    case 'minLength':
      return { problem: `must have at least ${plural(limit, 'character')}`, value: data };
    case 'maxLength':
      return { problem: `must have at most ${plural(limit, 'character')}`, value: data };
    case 'enum':
      return { problem: `must be one of ${shown(params.allowedValues)}`, value: data };
    case 'const':
      return { problem: `must be ${shown(params.allowedValue)}`, value: data };
    case 'x-check':
      // a check's message is its own words, the value included where it helps
      return { problem: failure.message ?? 'is not valid' };
    default:
      if (expects) return { problem: `must be ${expects}`, value: data };
      return {
        problem: parentSchema.pattern ? `must match ${String(parentSchema.pattern)}` : 'is not valid',
        value: data,
      };
  }
}

/**
 * Fastify's `schemaErrorFormatter`: the message about the failing parameter. Ajv stops at the first
 * parameter that fails; its last error is the outermost (a union's after those of its members), which is
 * the one that speaks of the whole parameter.
 */
export function formatSchemaErrors(failures: ValidationFailure[], part: string): Error {
  const failure = failures[failures.length - 1];
  const [name = ''] = failure.instancePath.split('/').filter(Boolean);
  const { problem, value } = describe(failure);
  const parameter = failure.keyword === 'required' ? (failure.params.missingProperty as string) : name;
  return new Error(parameterMessage(part, parameter, problem, value));
}
