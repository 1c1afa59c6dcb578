import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import { generateChain } from '../../src/devnet/chain.js';
import { fixtureMessages } from '../support/shared.js';

// How a `/new_microblocks` message numbers its txs and events, as a node numbers them: each microblock's
// txs from 0, the events across the whole message. Checked on the recorded node messages first (so the
// rule is the node's), then on the generator's.

interface MicroblocksMessage {
  transactions: { txid: string; tx_index: number; microblock_hash: string }[];
  events: { event_index: number }[];
}

/** Per message: the tx indexes of each microblock, in order, and the sorted event indexes. */
function numbering(messages: MicroblocksMessage[]) {
  return messages.map((m) => {
    const byMicroblock = new Map<string, number[]>();
    for (const tx of m.transactions) {
      byMicroblock.set(tx.microblock_hash, [...(byMicroblock.get(tx.microblock_hash) ?? []), tx.tx_index]);
    }
    return {
      txIndexes: [...byMicroblock.values()],
      eventIndexes: m.events.map((e) => e.event_index).sort((a, b) => a - b),
    };
  });
}

const from0 = (n: number) => Array.from({ length: n }, (_, i) => i);

let generated: MicroblocksMessage[];

before(async () => {
  generated = [];
  await generateChain(
    {
      blocks: 24,
      accounts: 12,
      seed: 'microblock-numbering',
      txsPerBlock: 12,
      workers: 0,
      nakamotoHeight: 20,
    },
    (m) => {
      if (m.path === '/new_microblocks') generated.push(JSON.parse(m.payload) as MicroblocksMessage);
    },
  );
});

test('a recorded node numbers each microblock from 0, and the events across the message', () => {
  const recorded = numbering(
    fixtureMessages('mainnet-reorg-scenario2')
      .filter((m) => m.path === '/new_microblocks')
      .map((m) => JSON.parse(m.payload) as MicroblocksMessage),
  );
  assert.deepEqual(recorded, [{ txIndexes: [[0, 1, 2], [0], [0]], eventIndexes: from0(6) }]);
});

test('the generator numbers its microblock messages the same way', () => {
  const ofGenerated = numbering(generated);
  assert.ok(
    ofGenerated.some((m) => m.txIndexes.length >= 2),
    'some message carries several microblocks',
  );
  for (const m of ofGenerated) {
    for (const indexes of m.txIndexes) assert.deepEqual(indexes, from0(indexes.length));
    assert.deepEqual(m.eventIndexes, from0(m.eventIndexes.length));
  }
});
