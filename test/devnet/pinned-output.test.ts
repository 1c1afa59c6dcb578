import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { test } from 'node:test';
import { generateChain, type GenerateOptions } from '../../src/devnet/chain.js';
import { formatTsvLine } from '../../src/protocol/tsv.js';

// The generator's output, pinned: the SHA-256 of every message (as `generate` writes it) and of the report
// (less its timings), for chains that between them cover every part of the generator. The goldens of the
// original API were recorded on a generated chain, and tests, demo and bench rely on a seed giving the same
// chain, so a change that moves a byte must be deliberate: re-record these values in the same commit and say
// why. Each chain below says what it is there for.

const CHAINS: { options: GenerateOptions; messages: string; report: string }[] = [
  {
    // epoch 2.x only: a fork, microblock streams, replace-by-fee, stale drops (the generator test's chain)
    options: { blocks: 30, accounts: 20, seed: 'test', txsPerBlock: 20, workers: 0 },
    messages: 'c23ff60637704102041aa6c43491f8a7a850063210adf8c84a5b058069a7cf94',
    report: 'dff9435406f745449a99b4362575b3651e99c95cb3ee3d51700e00f0cbc3ba29',
  },
  {
    // epoch 2.x only, long enough for two forks
    options: { blocks: 66, accounts: 12, seed: 'digest-b', txsPerBlock: 4, workers: 0 },
    messages: '6c6eefbbb950ecffeda04b3e986a22c47ad18c6be75c8d60bee397996c2f71cd',
    report: '8a7808a847a38abc7c74a516c0686cf5832f6e9768f9b9841d666c7c4bc945cd',
  },
  {
    // into Nakamoto at the default height, signed on two threads, the mempool counted by the indexer's rules
    options: {
      blocks: 70,
      accounts: 24,
      seed: 'digest-a',
      txsPerBlock: 6,
      workers: 2,
      nakamotoHeight: 29,
      mempoolGcBlocks: 256,
      mempoolGcMinutes: 1440,
    },
    messages: '25e5602141813ccd12d4697bddd2b69add2bda496740a1c25e9afbe9cf5c5246',
    report: '3e6fbef896e17c5311ec6de0029da93c0a2e779bb0c50d1fe6d43ba1e9f51c82',
  },
  {
    // Nakamoto from block 2: no microblocks or forks, tenures extended after empty sortitions
    options: { blocks: 40, accounts: 10, seed: 'digest-c', txsPerBlock: 3, workers: 0, nakamotoHeight: 2 },
    messages: '9dec9ba2b9ce24ac92460b9ff796eabbd83ad29fc00514cfd9654efad8686542',
    report: 'a589cd1896fcba29633e772cae2d7b685a097fbf2dc0ab49da33b9cd7f68bf79',
  },
  {
    // posted as a 3.x node posts it, but the tip comes before Nakamoto: every block is an epoch 2.x one
    options: { blocks: 14, accounts: 8, seed: 'digest-d', txsPerBlock: 2, workers: 2, nakamotoHeight: 15 },
    messages: '751549c56746be69f954b1ef21a805d59e0034151723e79ee0467cc5dfc7508e',
    report: '8264696010fa3c0a4c641c93871c429a31c8303c98787fc05163b5cafaf76574',
  },
  {
    // 5,505 txs: more than the 2,048 of a signing chunk and the 4,096 after which the mined queue compacts
    options: { blocks: 220, accounts: 40, seed: 'digest-e', txsPerBlock: 24, workers: 2, nakamotoHeight: 89 },
    messages: '2d0a0def0f682de36004401cd87383c516ec1104eb95c585dd0eb8fc47f48838',
    report: '2bee336c3d567bc9e7105538306bcbcdfa8262937844051d89bdc8af23bfc4fe',
  },
];

for (const chain of CHAINS) {
  const { seed, blocks, nakamotoHeight, workers } = chain.options;
  const era = nakamotoHeight === undefined ? 'epoch 2.x only' : `Nakamoto at ${nakamotoHeight}`;
  test(`seed ${seed}, ${blocks} blocks, ${era}, ${workers} signer threads: the same bytes`, async () => {
    const messages = createHash('sha256');
    const report = await generateChain(chain.options, (message) => {
      messages.update(formatTsvLine(message));
    });
    const { seconds, signedTxsPerSecond, ...stable } = report;
    assert.ok(seconds > 0 && signedTxsPerSecond > 0, 'the timings are the only fields left out');
    assert.equal(messages.digest('hex'), chain.messages, 'messages');
    assert.equal(createHash('sha256').update(JSON.stringify(stable)).digest('hex'), chain.report, 'report');
  });
}
