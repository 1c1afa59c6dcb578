import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { Ingestor, type MessageOutcome } from '../../src/ingest/ingestor.js';
import { buildObserverServer } from '../../src/ingest/observer-server.js';
import { replayFile } from '../../src/ingest/replay.js';
import { formatTsvLine, type RecordedMessage } from '../../src/protocol/tsv.js';
import type { Store } from '../../src/store/store.js';
import { freshApiServer } from '../support/api.js';
import { answersOf, everyEndpointUrl, type Answer } from '../support/answers.js';
import { capturingLogger, openTestStore, silentLogger, stopOwnCluster } from '../support/database.js';
import { generatedMessages } from '../support/delivery.js';
import { READ_TABLES, databaseDigest } from '../support/digest.js';
import { testEngines } from '../support/engines.js';
import { fixtureIsMainnet, fixtureMessages } from '../support/shared.js';

// A stacks-node announces a block it already announced: after a restart it re-sends what it holds, and a
// regtest node entering epoch 3.0 re-announces its genesis block (the same index_block_hash) with no
// transactions and no events, between two later blocks (seen in recordings of real nodes, between blocks 19
// and 20). The node re-sends every message until it gets a 200, so a refusal would stall it for good. The
// observer must answer 200 and keep what it holds: every endpoint answers as on the same chain without the
// re-announcement, through replay and through the observer's HTTP server.

after(stopOwnCluster);

interface Stream {
  name: string;
  mainnet: boolean;
  /** the chain as a node first sends it */
  messages: RecordedMessage[];
  /** the same chain with the first block announced again, emptied, after the block at `afterHeight` */
  reannounced: RecordedMessage[];
}

/** `messages` with their first block sent again without transactions or events after block `afterHeight`. */
function withFirstBlockReannounced(messages: RecordedMessage[], afterHeight: number): RecordedMessage[] {
  const blocks = messages.filter((m) => m.path === '/new_block');
  const first = blocks[0];
  const emptied = { ...JSON.parse(first.payload), transactions: [], events: [] };
  const at = messages.findIndex(
    (m) =>
      m.path === '/new_block' &&
      (JSON.parse(m.payload) as { block_height: number }).block_height === afterHeight,
  );
  assert.ok(at > 0, `no block at height ${afterHeight}`);
  const copy: RecordedMessage = {
    id: `${messages[at].id}-again`,
    receivedAt: messages[at].receivedAt,
    path: '/new_block',
    payload: JSON.stringify(emptied),
  };
  return [...messages.slice(0, at + 1), copy, ...messages.slice(at + 1)];
}

const streams: Stream[] = [];

before(async () => {
  // A real regtest node's recording: its genesis block 0 carries the boot contracts' deployments.
  const regtest = 'regtest-env-pox-4-stack-stx-in-reward-phase-S1';
  const recorded = fixtureMessages(regtest);
  const genesis = JSON.parse(recorded.find((m) => m.path === '/new_block')!.payload) as {
    block_height: number;
    transactions: unknown[];
  };
  assert.equal(genesis.block_height, 0);
  assert.ok(genesis.transactions.length > 0, 'the recorded genesis block carries its boot transactions');
  streams.push({
    name: regtest,
    mainnet: fixtureIsMainnet(regtest),
    messages: recorded,
    reannounced: withFirstBlockReannounced(recorded, 5),
  });
  // The project's generator: its first block holds the genesis mints; re-announced in the Nakamoto era.
  const { messages } = await generatedMessages({
    blocks: 30,
    accounts: 12,
    seed: 'block-reannounced',
    txsPerBlock: 4,
    workers: 0,
    nakamotoHeight: 12,
  });
  streams.push({
    name: 'generated-30-blocks',
    mainnet: true,
    messages,
    reannounced: withFirstBlockReannounced(messages, 20),
  });
});

async function ingestDirectly(store: Store, stream: Stream): Promise<void> {
  const ingestor = new Ingestor(store, { isMainnet: stream.mainnet, logger: silentLogger });
  for (const m of stream.messages) await ingestor.take(m.path, m.payload, m.receivedAt);
}

/** Through `replay`, as `npm run cli -- replay --file` runs it. */
async function ingestByReplay(store: Store, stream: Stream): Promise<number> {
  const dir = mkdtempSync(join(tmpdir(), 'reannounced-'));
  try {
    const file = join(dir, 'chain.tsv');
    writeFileSync(file, stream.reannounced.map(formatTsvLine).join(''));
    const ingestor = new Ingestor(store, { isMainnet: stream.mainnet, logger: silentLogger });
    const stats = await replayFile(ingestor, file);
    return stats.duplicates;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * Through the observer's HTTP server, one POST per message as a node sends them. The ingestor is given each
 * message's recorded receipt time (the server would take the clock's), so mempool receipt times compare.
 * Returns how many answers had each status.
 */
async function ingestByObserver(store: Store, stream: Stream): Promise<Map<number, number>> {
  const { logger, lines } = capturingLogger();
  const metrics: string[] = [];
  const ingestor = new Ingestor(store, {
    isMainnet: stream.mainnet,
    logger,
    onMessage: (path, outcome) => metrics.push(`${path} ${outcome}`),
  });
  let receivedAt = new Date(0);
  const app = buildObserverServer({
    ingestor: { take: (path, body) => ingestor.take(path, body, receivedAt) },
    logger,
    bodyLimitBytes: 64 << 20,
  });
  const statuses = new Map<number, number>();
  const outcomes: MessageOutcome[] = [];
  try {
    for (const m of stream.reannounced) {
      receivedAt = m.receivedAt;
      const res = await app.inject({
        method: 'POST',
        url: m.path,
        payload: m.payload,
        headers: { 'content-type': 'application/json' },
      });
      statuses.set(res.statusCode, (statuses.get(res.statusCode) ?? 0) + 1);
      if (res.statusCode === 200) outcomes.push((res.json() as { outcome: MessageOutcome }).outcome);
    }
  } finally {
    await app.close();
  }
  assert.equal(outcomes.filter((o) => o === 'reannounced').length, 1, stream.name);
  assert.equal(metrics.filter((m) => m === '/new_block reannounced').length, 1, stream.name);
  // the warning names the block and both messages' content hashes
  const [warning] = lines.filter((l) => l.msg.startsWith('a known block was announced again'));
  const first = JSON.parse(stream.messages.find((m) => m.path === '/new_block')!.payload) as {
    index_block_hash: string;
  };
  assert.equal(warning.index_block_hash, first.index_block_hash);
  assert.match(String(warning.stored_content_hash), /^[0-9a-f]{64}$/);
  assert.match(String(warning.received_content_hash), /^[0-9a-f]{64}$/);
  assert.notEqual(warning.stored_content_hash, warning.received_content_hash);
  assert.equal(warning.received_txs, 0);
  return statuses;
}

async function answersOfStore(store: Store, urls: string[]): Promise<Map<string, Answer>> {
  const app = await freshApiServer(store);
  try {
    return await answersOf(app, urls);
  } finally {
    await app.close();
  }
}

function assertSameAnswers(actual: Map<string, Answer>, expected: Map<string, Answer>, what: string) {
  assert.equal(actual.size, expected.size);
  for (const [url, answer] of expected) assert.deepEqual(actual.get(url), answer, `${what}: ${url}`);
}

for (const engine of testEngines(import.meta.url)) {
  describe(`a known block announced again (${engine})`, () => {
    test('the first block re-announced empty mid-chain: every answer 200, the index as without it', async () => {
      for (const stream of streams) {
        // PGlite takes the recorded chain, the case seen on real nodes (the generated one costs it ~30 s)
        if (engine === 'pglite' && stream !== streams[0]) continue;
        const clean = await openTestStore(engine);
        const replayed = await openTestStore(engine);
        const posted = await openTestStore(engine);
        try {
          await ingestDirectly(clean, stream);
          const duplicates = await ingestByReplay(replayed, stream);
          assert.equal(duplicates, 1, `${stream.name}: the re-announcement is the replay's one duplicate`);
          const statuses = await ingestByObserver(posted, stream);
          assert.deepEqual([...statuses], [[200, stream.reannounced.length]], stream.name);

          const expected = await databaseDigest(clean.sql, READ_TABLES);
          assert.deepEqual(
            await databaseDigest(replayed.sql, READ_TABLES),
            expected,
            `${stream.name}: replay`,
          );
          assert.deepEqual(
            await databaseDigest(posted.sql, READ_TABLES),
            expected,
            `${stream.name}: observer`,
          );

          const urls = await everyEndpointUrl(clean);
          assert.ok(urls.length > 100, `${stream.name}: ${urls.length} URLs`);
          const reference = await answersOfStore(clean, urls);
          assert.ok(
            [...reference.values()].filter((a) => a.status === 200).length > 100,
            `${stream.name}: most URLs name something that exists`,
          );
          assertSameAnswers(await answersOfStore(replayed, urls), reference, `${stream.name}: replay`);
          assertSameAnswers(await answersOfStore(posted, urls), reference, `${stream.name}: observer`);
        } finally {
          await clean.close();
          await replayed.close();
          await posted.close();
        }
      }
    });
  });
}
