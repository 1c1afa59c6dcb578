// `npm start` and `npm run cli`: the compiled command line (dist/cli/main.js), built first when dist/ is
// missing or older than the sources. The CLI runs in this process (imported, not spawned), so the signals
// npm forwards reach the server itself; package.json runs this with `exec`, so no shell stands between.
import { buildOrExit } from './build.mjs';

buildOrExit({ ifNeeded: true });
await import('../dist/cli/main.js');
