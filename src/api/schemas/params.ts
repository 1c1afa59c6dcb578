import Type from 'typebox';
import { caches } from '../../caches.js';
import { isValidContractName, isValidStacksAddress } from '../../chain/address.js';
import { DEMO } from './examples.js';
import { ParameterError } from './parameter-errors.js';

// Every path and query parameter of the API, decided here once: its schema (pattern, bounds, default), its
// description and an example from the demo chain (./examples.ts), where a pattern or a union cannot be
// read by a person what it accepts in words (`x-expects`), and, where a pattern cannot say it, its validity
// check. Schema validation alone decides: a check is an Ajv keyword (`x-check`, registered once on
// Fastify's Ajv instance by `registerParamChecks`), so every bad parameter gets the same JSON 400 from one
// place (plugins/errors.ts: `{statusCode: 400, code: 'FST_ERR_VALIDATION', error, message}`, the message
// `<path|query> parameter <name> <what is wrong>; got <value>`, ./parameter-errors.ts). Only rules
// between two parameters (`unanchored` with `until_block`, ...) are the handlers'.

/** The largest PostgreSQL integer: the largest height, index or offset the index can hold. */
export const MAX_INT = 2_147_483_647;

/** A 32-byte hash or tx id, `0x` optional (upstream's route pattern). */
const HASH_PATTERN = '^(0x)?[a-fA-F0-9]{64}$';

// ---- checks: one per kind of value, run by the `x-check` keyword ----

type Check = (value: unknown) => string | null;

const C32_PROBLEM = 'is not a c32check-encoded Stacks address (bad characters, length or checksum)';

/** The values a pure, costly check (c32check hashes twice) passed, cached: emptied when full. */
function remembered(isValid: (value: string) => boolean, max = 10_000): (value: string) => boolean {
  const valid = new Set<string>();
  caches.join(
    {
      name: 'valid addresses',
      layer: 'memos',
      key: 'an address of a path or query parameter',
      invalidatedBy: 'nothing (a pure check)',
      bound: `${max.toLocaleString('en')} addresses, then emptied`,
      file: 'src/api/schemas/params.ts',
    },
    valid,
  );
  return (value) => {
    if (valid.has(value)) return true;
    if (!isValid(value)) return false;
    if (valid.size >= max) valid.clear();
    valid.add(value);
    return true;
  };
}

const validAddress = remembered(isValidStacksAddress);

/** Why a string is not a principal (an address, or `<address>.<contract name>`), or null. */
export function principalProblem(principal: string): string | null {
  const dot = principal.indexOf('.');
  const address = dot < 0 ? principal : principal.slice(0, dot);
  if (!validAddress(address)) return `"${address}" ${C32_PROBLEM}`;
  if (dot < 0) return null;
  const name = principal.slice(dot + 1);
  if (!isValidContractName(name)) {
    return `contract name "${name}" must start with a letter, hold only letters, digits, "-" and "_", and have 1 to 128 characters`;
  }
  return null;
}

/** Most distinct contract ids one status request may ask for. */
export const MAX_CONTRACT_IDS = 50;

const UNTIL_BLOCK = /^(\d+|0x[0-9a-fA-F]{64})?$/;
const UNPREFIXED_HASH = /^[a-fA-F0-9]{64}$/;

const checks: Record<string, Check> = {
  principal: (value) => {
    const problem = principalProblem(String(value));
    return problem && `must be a Stacks address or contract id: ${problem}`;
  },
  'contract-ids': (value) => {
    const ids = [...new Set(Array.isArray(value) ? value.map(String) : [String(value)])];
    if (ids.length > MAX_CONTRACT_IDS) {
      return `must name at most ${MAX_CONTRACT_IDS} distinct contract ids; got ${ids.length}`;
    }
    const invalid = ids.find((id) => !id.includes('.') || principalProblem(id) !== null);
    return invalid === undefined
      ? null
      : `must be contract ids: "${invalid}" is not a contract id (expected <stacks address>.<contract name>, e.g. ${DEMO.contractId})`;
  },
  // beside upstream's pattern (0x optional), which Ajv may check after this: only what that lets through
  'prefixed-tx-id': (value) =>
    UNPREFIXED_HASH.test(String(value)) ? `must start with "0x"; got "${String(value)}"` : null,
  'until-block': (value) =>
    UNTIL_BLOCK.test(String(value))
      ? null
      : `must be a block height (a whole number, 0 or more) or a block hash or index block hash (0x and 64 hex digits); got "${String(value)}"`,
};

/** What `registerParamChecks` needs of Ajv (a dependency of Fastify's, not ours). */
interface AjvInstance {
  addKeyword(definition: never): unknown;
}

/**
 * Registers the `x-check` keyword on Fastify's Ajv instance (server.ts: `ajv.plugins`). It runs after the
 * keywords beside it (`anyOf`, `pattern`): what those reject is told by the parameter's `x-expects`.
 */
export function registerParamChecks<T extends AjvInstance>(ajv: T): T {
  const definition = {
    keyword: 'x-check',
    schemaType: 'string',
    errors: true,
    validate: function validate(
      name: string,
      value: unknown,
      _parent: unknown,
      context?: { instancePath: string },
    ) {
      const check = checks[name];
      if (!check) throw new Error(`x-check: no check named ${name}`);
      const problem = check(value);
      const self = validate as { errors?: object[] | null };
      self.errors = problem
        ? [{ keyword: 'x-check', message: problem, params: {}, instancePath: context?.instancePath }]
        : null;
      return problem === null;
    },
  };
  ajv.addKeyword(definition as never);
  // annotations, nothing to validate: how /doc shows a parameter (see HeightOrHashParam), and what a
  // parameter accepts, in words, for the message that rejects it (./parameter-errors.ts)
  ajv.addKeyword({ keyword: 'x-doc-schema' } as never);
  ajv.addKeyword({ keyword: 'x-expects', schemaType: 'string' } as never);
  return ajv;
}

// ---- the parameters ----

const TX_ID = 'a transaction id (64 hex digits, 0x optional)';

const txIdParam = (description: string, example: string) =>
  Type.String({ pattern: HASH_PATTERN, description, examples: [example], 'x-expects': TX_ID });

export const TxIdParam = txIdParam('A transaction id: 64 hex digits, 0x optional', DEMO.txId);

/** A tx of the principal in the same path. */
export const AccountTxIdParam = txIdParam(
  `${TX_ID.replace('a', 'A')} of a transaction the principal takes part in`,
  DEMO.busyTxId,
);

/**
 * A principal: a Stacks address, or a contract id `<address>.<contract name>`. The anyOf of two prefix
 * patterns is upstream's (the address pattern has no `$`, the contract one an unescaped `.`): it rejects
 * what upstream rejects. What they let through that is no principal (a bad checksum, a bad contract
 * name) is the `principal` check's.
 */
export const PrincipalParam = Type.Union(
  [
    Type.String({ pattern: '^[0123456789ABCDEFGHJKMNPQRSTVWXYZ]{28,41}' }),
    Type.String({ pattern: '^[0123456789ABCDEFGHJKMNPQRSTVWXYZ]{28,41}.[a-zA-Z]([a-zA-Z0-9]|[-_]){0,39}$' }),
  ],
  {
    description: 'A Stacks address, or a contract id `<address>.<contract name>`',
    examples: [DEMO.busyAddress],
    'x-expects': `a Stacks address (28 to 41 digits and capital letters but I, L, O, U, e.g. ${DEMO.busyAddress}) or a contract id (<address>.<contract name>)`,
    'x-check': 'principal',
  },
);

/** Upstream's contract id pattern, verbatim (its `.` unescaped): it rejects what upstream rejects. */
const CONTRACT_ID_PATTERN = '^[0123456789ABCDEFGHJKMNPQRSTVWXYZ]{28,41}.[a-zA-Z]([a-zA-Z0-9]|[-_]){0,39}$';

const ContractId = Type.String({ pattern: CONTRACT_ID_PATTERN });

export const ContractIdsQuery = Type.Union([Type.Array(ContractId), ContractId], {
  description: `Contract ids to report on: repeat the key for several (\`?contract_id=A&contract_id=B\`; commas do not separate ids). Duplicates count once; at most ${MAX_CONTRACT_IDS} distinct ids.`,
  examples: [[DEMO.contractId, DEMO.otherContractId]],
  'x-expects': `one or more contract ids (<stacks address>.<contract name>, e.g. ${DEMO.contractId})`,
  'x-check': 'contract-ids',
});

export const UnanchoredQuery = Type.Boolean({
  default: false,
  description: 'Include data of unconfirmed microblocks (stored at the tip height + 1)',
  examples: [false],
});

/** `unanchored` / `until_block` → what to read; "" counts as absent (docs/upstream.md A.0). */
export const UntilBlockQuery = Type.String({
  description:
    'State as of a block: its height (a whole number >= 0), or its block hash or index block hash (0x + 64 hex digits); not with `unanchored`',
  examples: [String(DEMO.blockHeight)],
  'x-check': 'until-block',
});

/** A page size: 0 means the default. */
export const LimitQuery = (max: number, fallback: number, what: string) =>
  Type.Integer({
    minimum: 0,
    maximum: max,
    default: fallback,
    description: `${what}, at most ${max} (0 means the default, ${fallback})`,
    examples: [Math.min(5, max)],
  });

export const OffsetQuery = (max: number, what: string) =>
  Type.Integer({ minimum: 0, maximum: max, default: 0, description: what, examples: [0] });

/** Its example is 0 (no filter): a height with `until_block` is a 400, and /doc sends every example. */
export const AccountTxsHeightQuery = Type.Integer({
  minimum: 0,
  description:
    'Only the transactions of this block height, all of them (no paging); 0 means none. Not with `until_block`',
  examples: [0],
});

// ---- parameters whose check must see the raw text, before Ajv coerces it ----

// Ajv's type coercion turns every string JavaScript reads as a number into one: `0x10` → 16, `1e3` → 1000,
// ` ` → 0. A height, limit or offset written that way is a mistake, not a number (plugins/strict-numbers.ts
// rejects it before validation). Plain decimals (and what Ajv rejects itself, like `abc` or `1.5`) are
// left to the schema.
const PLAIN_NUMBER = /^-?\d+(\.\d+)?$/;

/** True for a string Ajv would coerce to a number although it is not written as a decimal. */
export function isDisguisedNumber(value: string): boolean {
  return !PLAIN_NUMBER.test(value) && value !== '' && !Number.isNaN(Number(value));
}

const PREFIXED_HASH = /^0x[a-fA-F0-9]{64}$/;
const NEGATIVE_INTEGER = /^-\d+$/;

const HEIGHT_OR_HASH =
  'a block height (a whole number, 0 or more, in decimal), a block hash or index block hash (64 hex digits, 0x optional), or "latest"';

/**
 * A block by height, hash, index block hash or `latest`. The anyOf (a literal, a pattern, an integer) is
 * upstream's; /doc shows it as the one text field its `x-doc-schema` describes (plugins/openapi.ts), since
 * swagger-ui renders a union holding a literal as a drop-down offering only that literal.
 */
export const HeightOrHashParam = Type.Union(
  [Type.Literal('latest'), Type.String({ pattern: HASH_PATTERN }), Type.Integer()],
  {
    description:
      'A block height (a whole number), a block hash or index block hash (64 hex digits, 0x optional), or `latest` for the highest canonical block',
    examples: [String(DEMO.blockHeight)],
    'x-expects': HEIGHT_OR_HASH,
    'x-doc-schema': {
      type: 'string',
      pattern: `^(latest|\\d+|${HASH_PATTERN.slice(1, -1)})$`,
    },
  },
);

/**
 * What the schema cannot see of `height_or_hash` once Ajv has coerced it: 64 hex digits without 0x are a
 * hash (even when all decimal), a number not written as a decimal is none of the accepted forms, and a
 * negative height is no height (upstream answers 500 there: a deliberate difference).
 */
export async function checkHeightOrHash(request: { params: unknown }) {
  const params = request.params as { height_or_hash: string };
  const value = params.height_or_hash;
  if (UNPREFIXED_HASH.test(value)) params.height_or_hash = '0x' + value;
  else if (NEGATIVE_INTEGER.test(value) || (!PREFIXED_HASH.test(value) && isDisguisedNumber(value))) {
    throw new ParameterError('params', 'height_or_hash', `must be ${HEIGHT_OR_HASH}`, value);
  }
}

export const BurnBlockHeightParam = Type.Integer({
  minimum: 0,
  description: 'A burnchain (Bitcoin) block height',
  examples: [DEMO.burnBlockHeight],
});

/** A block height (the v1 block by height). */
export const BlockHeightParam = Type.Integer({
  minimum: 0,
  description: 'A Stacks block height',
  examples: [DEMO.blockHeight],
});

const HEX = 'hex digits in pairs, 0x optional';

/**
 * A hash in a v1 block or microblock path: upstream takes any hex there (bytes of any length, found or not:
 * 404), and redirects a value without its 0x to the path with it (the answer modules do).
 */
const hexHashParam = (description: string, example: string) =>
  Type.String({
    pattern: '^(0x)?([a-fA-F0-9]{2})*$',
    description: `${description} (${HEX})`,
    examples: [example],
    'x-expects': `a hash (${HEX})`,
  });

export const BlockHashParam = hexHashParam('A block hash', DEMO.blockHash);
export const BurnBlockHashParam = hexHashParam('A burnchain (Bitcoin) block hash', DEMO.burnBlockHash);
export const MicroblockHashParam = hexHashParam('A microblock hash', DEMO.microblockHash);

// ---- transactions ----

/** Largest number of ids `/extended/v1/tx/multiple` takes in one request (upstream has no bound). */
export const MAX_MULTIPLE_TX_IDS = 100;
export const EVENT_LIMIT_DEFAULT = 20;
const EVENT_LIMIT_MAX = 100;

/** The query of a transaction lookup (by id, or several). */
export const TxQuery = {
  event_limit: LimitQuery(EVENT_LIMIT_MAX, EVENT_LIMIT_DEFAULT, 'Events returned per transaction'),
  event_offset: OffsetQuery(
    MAX_INT,
    'Index of the first event returned (events are paged by their event_index)',
  ),
  unanchored: Type.Boolean({
    default: false,
    description: 'Include transactions of microblocks not yet confirmed by an anchored block',
    examples: [false],
  }),
  exclude_function_args: Type.Boolean({
    default: false,
    description: 'Leave out `contract_call.function_args`',
    examples: [false],
  }),
};

/** Several tx ids; upstream's pattern, then `0x` required. */
export const TxIdsQuery = Type.Array(
  Type.String({
    pattern: HASH_PATTERN,
    'x-expects': 'a transaction id (0x and 64 hex digits)',
    'x-check': 'prefixed-tx-id',
  }),
  {
    minItems: 1,
    maxItems: MAX_MULTIPLE_TX_IDS,
    description: `Transaction ids (0x-prefixed hex), at most ${MAX_MULTIPLE_TX_IDS}: repeat the key, or separate them by commas`,
    examples: [[DEMO.txId, DEMO.otherTxId]],
    'x-expects':
      'one or more transaction ids (0x and 64 hex digits each): repeat the key, or separate them by commas',
  },
);

/** `tx_id=a,b` and `tx_id=a&tx_id=b` both name several ids (a preValidation hook of the route). */
export async function splitTxIds(request: { query: unknown }) {
  const query = request.query as { tx_id?: string | string[] };
  if (query.tx_id === undefined) return;
  const values = Array.isArray(query.tx_id) ? query.tx_id : [query.tx_id];
  query.tx_id = values.flatMap((v) => v.split(','));
}
