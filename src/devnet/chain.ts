import { Devnet, type GenerateOptions } from './devnet.js';
import type { MessageSink } from './emitter.js';
import { Epoch2Blocks } from './epoch2.js';
import type { GenerateReport } from './report.js';
import { NakamotoTenures } from './tenures.js';

// The demo-chain generator: a deterministic Stacks event stream, as a stacks-node would post it to an
// event observer, with really signed transactions. Block by block: the txs users send meanwhile and the
// mempool messages (mempool-churn.ts; drafted by tx-mix.ts, applied to the ledger in mining order so
// balances, nonces and events stay consistent: ledger.ts), the burn block (burnchain.ts), and the block
// mining the txs waiting longest (mining-queue.ts), with the matured miner rewards (miner-rewards.ts).
//
// The schedule is below: the genesis block, epoch 2.x blocks with microblock streams and short forks
// (epoch2.ts), then optionally epoch 3.0 (Nakamoto) from a given height: tenures of a few blocks per burn
// block (tenures.ts), posted as a 3.x node posts them from the first block on. The pieces share one
// `Devnet` (devnet.ts). Messages are planned as blocks are simulated and written once their txs are signed,
// in chunks on worker threads (emitter.ts); their payloads are built then (block-messages.ts). Memory stays
// bounded: the ledger is per account, the mining queue about one block deep, and a few chunks in flight.
// The report `generate` prints is filled in as blocks are planned (report.ts).

export type { GenerateOptions } from './devnet.js';
export type { GenerateReport } from './report.js';

/**
 * Where the demo chain, the bench chains and `generate` enter Nakamoto: after 40% of the chain in epoch 2.x
 * (which shows its microblocks and forks), so the rest has the shape of today's chain.
 */
export function defaultNakamotoHeight(blocks: number): number {
  return Math.floor(blocks * 0.4) + 1;
}

/** Generates the chain, handing each message to `sink` in order. */
export function generateChain(options: GenerateOptions, sink: MessageSink): Promise<GenerateReport> {
  if (!Number.isInteger(options.blocks) || options.blocks < 1)
    throw new Error('blocks must be an integer >= 1');
  if (!Number.isInteger(options.accounts) || options.accounts < 8) {
    throw new Error('accounts must be an integer >= 8');
  }
  const { nakamotoHeight } = options;
  if (nakamotoHeight !== undefined && (!Number.isInteger(nakamotoHeight) || nakamotoHeight < 2)) {
    throw new Error('nakamotoHeight must be an integer >= 2 (block 1 holds the genesis mints)');
  }
  return run(new Devnet(options, sink));
}

async function run(net: Devnet): Promise<GenerateReport> {
  const started = performance.now();
  const epoch2 = new Epoch2Blocks(net);
  try {
    epoch2.genesis();
    await net.emitter.flush();
    for (let height = 2; height <= net.epoch2Tip; height++) {
      if (epoch2.forkHeights.has(height) && height < net.epoch2Tip) {
        epoch2.fork(height); // mines `height` and the next
        height++;
      } else {
        epoch2.next(height);
      }
      await net.emitter.flush();
    }
    await new NakamotoTenures(net).run();
    await net.emitter.finish();
  } finally {
    await net.emitter.close();
  }
  const { emitter } = net;
  return net.reportBuilder.finish({
    messages: emitter.messages,
    paths: emitter.paths,
    signedTxs: emitter.signedTxs,
    mempoolPending: net.mempool.size,
    seconds: (performance.now() - started) / 1000,
  });
}
