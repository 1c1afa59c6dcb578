// npm run conformance [-- --engine pglite|postgres] [--family blocks] [--fixture mocknet] [--max 20]
// Replays every shared fixture, recorded and generated (`--fixture generated/gen-small`), and compares our
// answers with the original API's (../shared/golden): the contract's ten routes and those beyond them.
import { parseArgs } from 'node:util';
import type { Engine } from '../src/store/db.js';
import {
  BEYOND_FAMILIES,
  FAMILIES,
  formatReport,
  runFixture,
  type Family,
  type FixtureRun,
} from '../test/conformance/harness.js';
import { stopOwnCluster } from '../test/support/database.js';
import { engines } from '../test/support/engines.js';
import { GENERATED_CHAINS, fixtureNames } from '../test/support/shared.js';

const { values } = parseArgs({
  options: {
    engine: { type: 'string', multiple: true },
    family: { type: 'string', multiple: true },
    fixture: { type: 'string', multiple: true },
    max: { type: 'string', default: '5' },
  },
});
const selectedEngines = (values.engine as Engine[] | undefined) ?? engines;
const families = (values.family as Family[] | undefined) ?? [...FAMILIES, ...BEYOND_FAMILIES];
const fixtures = values.fixture ?? [
  ...fixtureNames(),
  ...GENERATED_CHAINS.map((name) => `generated/${name}`),
];

const runs: FixtureRun[] = [];
for (const engine of selectedEngines) {
  for (const fixture of fixtures) runs.push(await runFixture(fixture, engine, families));
}
console.log(formatReport(runs, Number(values.max)));
const total = runs.flatMap((r) => r.results);
const failed = total.filter((r) => !r.ok).length;
console.log(`\n${total.length - failed}/${total.length} golden records match (${failed} differ)`);
await stopOwnCluster();
process.exitCode = failed > 0 ? 1 : 0;
