import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Ingestor, type MessageOutcome } from '../../src/ingest/ingestor.js';
import type { RecordedMessage } from '../../src/protocol/tsv.js';
import type { Store } from '../../src/store/store.js';
import { openTestStore, silentLogger, stopOwnCluster } from '../support/database.js';
import { testEngines } from '../support/engines.js';
import { generatedMessages, readMessages, retriedDeliveries } from '../support/delivery.js';
import { READ_TABLES, appliedMessageLog, databaseDigest } from '../support/digest.js';
import { fixtureFile, fixtureIsMainnet, fixtureNames } from '../support/shared.js';

// Re-delivery and out-of-order delivery, as a stacks-node retrying its POSTs produces them: every message
// twice in a row, and microblocks ahead of the block they build on. The index must end up exactly as after
// one clean delivery of the stream.

after(stopOwnCluster);

interface Stream {
  name: string;
  mainnet: boolean;
  messages: RecordedMessage[];
}

const streams: Stream[] = [];
const totals = { deliveries: 0, again: 0, early: 0 };

before(async () => {
  for (const name of fixtureNames()) {
    streams.push({ name, mainnet: fixtureIsMainnet(name), messages: await readMessages(fixtureFile(name)) });
  }
  // The fixtures hold few microblock streams; a generated chain adds one every ~25 blocks.
  const generated = await generatedMessages({
    blocks: 80,
    accounts: 30,
    seed: 'redelivery',
    txsPerBlock: 6,
    workers: 0,
  });
  streams.push({ name: 'generated-80-blocks', mainnet: true, messages: generated.messages });
});

type Outcomes = Record<MessageOutcome, number>;
const none = (): Outcomes => ({ applied: 0, duplicate: 0, reannounced: 0, skipped: 0 });

async function deliverClean(store: Store, stream: Stream): Promise<Outcomes> {
  const ingestor = new Ingestor(store, { isMainnet: stream.mainnet, logger: silentLogger });
  const outcomes = none();
  for (const m of stream.messages) outcomes[await ingestor.take(m.path, m.payload, m.receivedAt)]++;
  return outcomes;
}

async function deliverRetried(store: Store, stream: Stream) {
  const ingestor = new Ingestor(store, { isMainnet: stream.mainnet, logger: silentLogger });
  const outcomes = { early: none(), first: none(), again: none() };
  for (const { message, copy } of retriedDeliveries(stream.messages)) {
    outcomes[copy][await ingestor.take(message.path, message.payload, message.receivedAt)]++;
  }
  return outcomes;
}

for (const engine of testEngines(import.meta.url)) {
  describe(`re-delivered and out-of-order messages (${engine})`, () => {
    test('every stream delivered twice over, microblocks ahead of their block: same index as one clean delivery', async () => {
      for (const stream of streams) {
        const clean = await openTestStore(engine);
        const retried = await openTestStore(engine);
        try {
          const single = await deliverClean(clean, stream);
          const outcomes = await deliverRetried(retried, stream);

          assert.deepEqual(
            await databaseDigest(retried.sql, READ_TABLES),
            await databaseDigest(clean.sql, READ_TABLES),
            `${stream.name}: index differs from a clean delivery`,
          );
          // The same messages took effect, in the same order.
          assert.deepEqual(
            await appliedMessageLog(retried.sql),
            await appliedMessageLog(clean.sql),
            stream.name,
          );
          // Every second copy is a no-op; early microblocks change nothing (they are skipped); the first
          // copies take effect as in the clean delivery.
          const { early, first, again } = outcomes;
          const detail = `${stream.name}: ${JSON.stringify({ single, ...outcomes })}`;
          assert.equal(again.duplicate, stream.messages.length, detail);
          assert.equal(early.applied + early.duplicate, 0, detail);
          assert.equal(first.applied, single.applied, detail);

          totals.deliveries += stream.messages.length * 2 + early.skipped;
          totals.again += stream.messages.length;
          totals.early += early.skipped;
        } finally {
          await clean.close();
          await retried.close();
        }
      }
      assert.ok(totals.early >= 5, `microblocks delivered early: ${totals.early}`);
      console.log(
        `re-delivery (${engine}): ${streams.length} streams, ${totals.deliveries} deliveries, ` +
          `${totals.again} re-sent copies, ${totals.early} microblock messages ahead of their block`,
      );
      totals.deliveries = totals.again = totals.early = 0;
    });
  });
}
