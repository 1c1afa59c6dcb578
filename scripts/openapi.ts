// Writes docs/openapi.yaml from the route schemas (`npm run openapi`). A test fails when the committed
// file differs from what this produces.
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { buildOpenApiDocument, openApiYaml } from './openapi-document.js';

const target = fileURLToPath(new URL('../docs/openapi.yaml', import.meta.url));
const document = await buildOpenApiDocument();
writeFileSync(target, openApiYaml(document));
const paths = Object.keys(document.paths as object).length;
process.stdout.write(`wrote ${target} (${paths} paths)\n`);
