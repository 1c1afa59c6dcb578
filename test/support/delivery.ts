import { generateChain, type GenerateOptions } from '../../src/devnet/chain.js';
import { Ingestor } from '../../src/ingest/ingestor.js';
import { readTsv, type RecordedMessage } from '../../src/protocol/tsv.js';
import type { Store } from '../../src/store/store.js';
import { silentLogger } from './database.js';

// Message streams for the reliability tests: a recorded or generated event stream, and the orders in which a
// stacks-node may deliver it when it retries.

export async function readMessages(file: string): Promise<RecordedMessage[]> {
  const messages: RecordedMessage[] = [];
  for await (const { bytesRead: _bytesRead, ...m } of readTsv(file)) messages.push(m);
  return messages;
}

/** Applies the messages in order, each once, through the ingest path (mainnet addresses). */
export async function ingestMessages(store: Store, messages: RecordedMessage[]): Promise<void> {
  const ingestor = new Ingestor(store, { isMainnet: true, logger: silentLogger });
  for (const m of messages) await ingestor.take(m.path, m.payload, m.receivedAt);
}

/** A generated chain (deterministic for its seed), held in memory. */
export async function generatedMessages(options: Omit<GenerateOptions, 'onProgress'>) {
  const messages: RecordedMessage[] = [];
  const report = await generateChain(options, (m) => {
    messages.push(m);
  });
  return { messages, report };
}

export interface Delivery {
  message: RecordedMessage;
  /** `early`: a microblocks message delivered before its parent block; `again`: a re-sent copy */
  copy: 'early' | 'first' | 'again';
}

function parentIndexHash(m: RecordedMessage): string | undefined {
  return (JSON.parse(m.payload) as { parent_index_block_hash?: string }).parent_index_block_hash;
}

function indexHash(m: RecordedMessage): string | undefined {
  return (JSON.parse(m.payload) as { index_block_hash?: string }).index_block_hash;
}

/**
 * The stream as a retrying node may deliver it: every message twice in a row (the answer to the first copy
 * was lost), and each microblocks message once more ahead of its parent block (it overtook the block, whose
 * delivery was being retried), before its own two copies in its place.
 */
export function retriedDeliveries(messages: RecordedMessage[]): Delivery[] {
  const early = new Map<number, RecordedMessage[]>();
  messages.forEach((m, i) => {
    if (m.path !== '/new_block') return;
    const hash = indexHash(m);
    const streamed = messages
      .slice(i + 1)
      .filter((later) => later.path === '/new_microblocks' && parentIndexHash(later) === hash);
    if (streamed.length > 0) early.set(i, streamed);
  });
  return messages.flatMap((message, i) => [
    ...(early.get(i) ?? []).map((m) => ({ message: m, copy: 'early' as const })),
    { message, copy: 'first' as const },
    { message, copy: 'again' as const },
  ]);
}
