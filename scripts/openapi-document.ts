import pino from 'pino';
import YAML from 'yaml';
import type { Database } from '../src/store/db.js';
import { Store } from '../src/store/store.js';
import { buildApiServer } from '../src/api/server.js';

/** A database that is never opened: building the routes to read their schemas touches none. */
const noDatabase: Database = {
  engine: 'postgres',
  description: 'none (OpenAPI generation)',
  get sql(): never {
    throw new Error('no database: the server was built only to generate its OpenAPI document');
  },
  close: async () => {},
};

/** The OpenAPI document of the read API, generated from the route schemas of a server built offline. */
export async function buildOpenApiDocument(): Promise<Record<string, unknown>> {
  const app = await buildApiServer({
    store: new Store(noDatabase),
    logger: pino({ level: 'silent' }),
    apiVersion: 'openapi',
  });
  try {
    await app.ready();
    return structuredClone(app.swagger()) as unknown as Record<string, unknown>;
  } finally {
    await app.close();
  }
}

/** docs/openapi.yaml: the same document as YAML (no anchors, stable layout). */
export function openApiYaml(document: Record<string, unknown>): string {
  const header = '# Generated from the route schemas by `npm run openapi`: do not edit by hand.\n';
  return header + YAML.stringify(document, { aliasDuplicateObjects: false, lineWidth: 0 });
}
