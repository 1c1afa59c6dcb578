import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance, FastifySchema } from 'fastify';
import { EXEMPT_ROUTE_PATHS } from './access-control.js';
import { RPC_EVENT, TOPIC_KINDS, TOPIC_NAMES } from '../../push/topics.js';
import { DEPRECATION_WARNING } from './conventions.js';

// The OpenAPI 3.1 document is generated from the route schemas (the same TypeBox schemas that validate
// requests and serialize answers), never written by hand. `finishDocument` adds what the schemas cannot
// say: the optional X-API-Key scheme and its 401/403/429 answers, rate-limit and deprecation headers,
// one description per error status, and named components for every titled schema.

const OPENAPI_JSON_PATH = '/openapi.json';
const DOCS_PATH = '/doc';

export interface OpenApiOptions {
  /** The package version (never the git commit: the committed docs/openapi.yaml must be reproducible). */
  version: string;
}

type Json = Record<string, unknown>;

/** Route schemas by `METHOD url`, as registered (for tests that validate answers against them). */
const schemasByApp = new WeakMap<FastifyInstance, Map<string, FastifySchema>>();

/**
 * The schema of every route of a server built by buildApiServer, keyed `GET /extended/v1/tx/:tx_id`.
 * @internal for the tests that check answers against the schemas
 */
export function routeSchemas(app: FastifyInstance): Map<string, FastifySchema> {
  const schemas = schemasByApp.get(app);
  if (!schemas) throw new Error('routeSchemas: this server has no OpenAPI plugin');
  return schemas;
}

const DESCRIPTION = `A read-only query interface to a Stacks blockchain indexer: balances, transactions (mined and
pending), blocks, mempool statistics and fee priorities, smart-contract deployment status, and per-account
transaction lists with transfer details. The answers reproduce those of the original Stacks Blockchain API.

**Authentication.** An API key is optional. Send it in the \`X-API-Key\` header. Without a key a request is
served as anonymous traffic, with the lower rate limit. A missing key gets 401 only when the server is set
to require keys; an unknown, malformed or revoked key always gets 403.

**Rate limits.** Per minute: 50 requests per client IP without a key, 500 per key whatever the IP (server
defaults). Limited answers carry \`RateLimit-Limit\`, \`RateLimit-Remaining\` and \`RateLimit-Reset\`; a 429 adds
\`Retry-After\`.

**Errors.** Every error answer is JSON \`{statusCode, error, message}\` (schema validation errors add
\`code\`); the message says what was wrong.

**Caching.** Answers that depend on the chain state carry an \`ETag\`; send it back in \`If-None-Match\` to
get 304 while nothing changed.

**Deprecations.** Deprecated operations answer with a \`Warning: 299\` header.

**Versioning.** The version is part of the path: \`/extended/v1/...\` and \`/extended/v2/...\` live side by side.

**Live push.** The same port pushes events, as the official client (\`@stacks/blockchain-api-client\`) speaks
them: WebSocket JSON-RPC at \`/extended/v1/ws\` and socket.io at \`/socket.io/\`. Each event is what the matching
read route answers at that moment. Topics (socket.io name, then the WebSocket \`event\`):
${TOPIC_KINDS.map((kind) => `\`${TOPIC_NAMES[kind]}\` (\`${RPC_EVENT[kind]}\`)`).join(', ')}.`;

const TAG_DESCRIPTIONS: Record<string, string> = {
  Accounts: 'Balances and transaction lists of an address or contract',
  Transactions: 'Mined and pending transactions',
  Blocks: 'Stacks blocks',
  Microblocks: 'Microblocks of epoch 2.x: batches of transactions streamed between blocks',
  Mempool: 'Pending transactions: statistics and fee priorities',
  'Smart Contracts': 'Deployment status of smart contracts',
  Status: 'Service status, liveness and readiness',
};

const ERROR_DESCRIPTIONS: Record<string, string> = {
  '400': 'Invalid request: a parameter is malformed, out of range, or conflicts with another',
  '401': 'Missing API key (only when the server requires keys)',
  '403': 'Invalid, malformed or revoked API key',
  '404': 'Not found',
  '429': 'Rate limit exceeded: retry after the number of seconds in Retry-After',
  '500': 'Internal error',
  '503': 'The database is unavailable',
};

const ERROR_SCHEMA_REF = '#/components/schemas/ErrorResponse';

function isExemptUrl(url: string): boolean {
  return EXEMPT_ROUTE_PATHS.some((p) => url === p || url.startsWith(`${p}/`));
}

const header = (description: string, type: 'integer' | 'string') => ({ description, schema: { type } });

const RATE_LIMIT_HEADERS = {
  'RateLimit-Limit': header('Requests allowed in the current window (when rate limiting is on)', 'integer'),
  'RateLimit-Remaining': header('Requests left in the current window', 'integer'),
  'RateLimit-Reset': header('Seconds until the window resets', 'integer'),
};

/** Replaces every titled schema by a `$ref` to a component of that name (when one title means one schema). */
function hoistTitledSchemas(doc: Json) {
  const components = ((doc.components as Json).schemas ??= {}) as Record<string, unknown>;
  const canonical = new Map<string, string>();
  const conflicting = new Set<string>();
  const visit = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(visit);
    if (!node || typeof node !== 'object') return node;
    const out: Json = {};
    for (const [key, value] of Object.entries(node)) out[key] = visit(value);
    const title = out.title;
    const isSchema = 'type' in out || 'properties' in out || 'anyOf' in out || 'oneOf' in out;
    if (typeof title !== 'string' || !isSchema) return out;
    const name = title.replace(/[^A-Za-z0-9._-]/g, '_');
    const text = JSON.stringify(out);
    const seen = canonical.get(name);
    if (seen === undefined && !conflicting.has(name)) {
      canonical.set(name, text);
      components[name] = out;
    } else if (seen !== text) {
      // Two different schemas under one title: keep this one inline rather than guess.
      conflicting.add(name);
      return out;
    }
    return { $ref: `#/components/schemas/${name}` };
  };
  doc.paths = visit(doc.paths);
}

/**
 * The parameters as /doc shows them: a parameter's `x-doc-schema` (schemas/params.ts) replaces its
 * validation schema there, keeping its description and examples; the server's keywords (`x-check`,
 * `x-expects`) are left out. A parameter with a default is optional to a client: the route's schema lists it as
 * required because validation fills it in, so the handler always has it.
 */
function documentedParameters(schema: FastifySchema): FastifySchema {
  const out: Json = { ...schema };
  for (const part of ['params', 'querystring'] as const) {
    const object = out[part] as { properties?: Record<string, Json>; required?: string[] } | undefined;
    if (!object?.properties) continue;
    const properties: Record<string, Json> = {};
    for (const [name, property] of Object.entries(object.properties)) {
      const docSchema = property['x-doc-schema'] as Json | undefined;
      properties[name] = withoutChecks(
        docSchema
          ? { ...docSchema, description: property.description, examples: property.examples }
          : property,
      ) as Json;
    }
    const required = object.required?.filter((name) => properties[name]?.default === undefined);
    out[part] = { ...object, properties, required };
  }
  return out as FastifySchema;
}

/** The keywords of ours that only the server reads (schemas/params.ts). */
const SERVER_KEYWORDS = new Set(['x-check', 'x-doc-schema', 'x-expects']);

/** A copy of a parameter schema without the server's own keywords (at any depth). */
function withoutChecks(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(withoutChecks);
  if (!node || typeof node !== 'object') return node;
  const out: Json = {};
  for (const [key, value] of Object.entries(node)) {
    if (!SERVER_KEYWORDS.has(key)) out[key] = withoutChecks(value);
  }
  return out;
}

/** What the route schemas cannot say, added to the generated document. */
function finishDocument(doc: Json): Json {
  hoistTitledSchemas(doc);
  const components = doc.components as Json;
  (components.schemas as Json).ErrorResponse ??= {
    type: 'object',
    required: ['statusCode', 'error', 'message'],
    properties: {
      statusCode: { type: 'integer' },
      code: { type: 'string' },
      error: { type: 'string' },
      message: { type: 'string' },
    },
  };
  components.securitySchemes = {
    ApiKey: {
      type: 'apiKey',
      in: 'header',
      name: 'X-API-Key',
      description:
        'Optional. Without it a request is anonymous (lower rate limit); a bad key gets 403, a missing key 401 only where keys are required.',
    },
  };
  // `{}` first: the key is optional.
  doc.security = [{}, { ApiKey: [] }];

  const usedTags: string[] = [];
  for (const item of Object.values(doc.paths as Record<string, Json>)) {
    for (const operation of Object.values(item) as Json[]) {
      for (const tag of (operation.tags as string[] | undefined) ?? []) {
        if (!usedTags.includes(tag)) usedTags.push(tag);
      }
      const responses = (operation.responses ??= {}) as Record<string, Json>;
      const limited = !(Array.isArray(operation.security) && operation.security.length === 0);
      if (limited) {
        for (const status of ['401', '403', '429']) {
          responses[status] ??= {
            description: ERROR_DESCRIPTIONS[status],
            content: { 'application/json': { schema: { $ref: ERROR_SCHEMA_REF } } },
          };
        }
        responses['429'].headers = {
          ...RATE_LIMIT_HEADERS,
          'Retry-After': header('Seconds to wait before retrying', 'integer'),
        };
      }
      for (const [status, response] of Object.entries(responses)) {
        const schema = (response.content as Record<string, Json> | undefined)?.['application/json']
          ?.schema as Json | undefined;
        if (ERROR_DESCRIPTIONS[status] && schema?.$ref === ERROR_SCHEMA_REF) {
          response.description = ERROR_DESCRIPTIONS[status];
        } else if (response.description === 'Default Response') response.description = 'Success';
        if (status.startsWith('2') && limited) {
          response.headers = { ...RATE_LIMIT_HEADERS, ...(response.headers as Json | undefined) };
        }
        if (operation.deprecated === true) {
          response.headers = {
            ...(response.headers as Json | undefined),
            Warning: {
              description: `Always \`${DEPRECATION_WARNING}\` on a deprecated operation`,
              schema: { type: 'string' },
            },
          };
        }
      }
    }
  }
  doc.tags = usedTags.map((name) => ({
    name,
    ...(TAG_DESCRIPTIONS[name] ? { description: TAG_DESCRIPTIONS[name] } : {}),
  }));
  return doc;
}

/**
 * The OpenAPI document at `/openapi.json` and the interactive docs at `/doc` (Swagger UI served from the
 * npm package's own files: no CDN, works offline). Register before the routes: routes are collected as
 * they are added.
 */
export async function registerOpenApi(app: FastifyInstance, options: OpenApiOptions) {
  const schemas = new Map<string, FastifySchema>();
  schemasByApp.set(app, schemas);
  app.addHook('onRoute', (route) => {
    if (!route.schema || route.schema.hide) return;
    for (const method of [route.method].flat()) schemas.set(`${method} ${route.url}`, route.schema);
  });

  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Stacks read API',
        version: options.version,
        description: DESCRIPTION,
      },
    },
    transform: ({ schema, url, route }) => {
      const exempt = route.config?.accessControl === false || isExemptUrl(url);
      const documented = schema && documentedParameters(schema);
      return { schema: exempt && documented ? { ...documented, security: [] } : documented, url };
    },
    transformObject: (documentObject) =>
      finishDocument(('openapiObject' in documentObject ? documentObject.openapiObject : {}) as Json),
  });

  await app.register(swaggerUi, {
    routePrefix: DOCS_PATH,
    theme: { title: 'Stacks read API — reference' },
    uiConfig: { docExpansion: 'list', deepLinking: true, defaultModelsExpandDepth: 0 },
  });

  let document: string | undefined;
  app.get(
    OPENAPI_JSON_PATH,
    { schema: { hide: true }, config: { accessControl: false } },
    async (_request, reply) => {
      document ??= JSON.stringify(app.swagger());
      return reply.type('application/json; charset=utf-8').send(document);
    },
  );
  // Whoever opens the bare server address lands on the reference rather than on a 404.
  app.get('/', { schema: { hide: true }, config: { accessControl: false } }, (_request, reply) =>
    reply.redirect(DOCS_PATH, 302),
  );
}
