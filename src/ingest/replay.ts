import { createWriteStream } from 'node:fs';
import { once } from 'node:events';
import { readLoggedMessages } from '../store/read/message-log.js';
import type { Store } from '../store/store.js';
import type { Ingestor, PreparedMessage } from './ingestor.js';
import { fileSize, formatTsvLine, readTsv } from '../protocol/tsv.js';

export interface ReplayStats {
  messages: number;
  /** messages naming what the index already holds (the same content, or other content: `reannounced`) */
  duplicates: number;
  /** messages that did not fit the index when replayed (microblocks off the tip): logged, no effect */
  skipped: number;
  blocks: number;
  seconds: number;
}

export interface ReplayProgress {
  /** bytes of the file up to the end of the message just applied */
  bytesRead: number;
  totalBytes: number;
  stats: ReplayStats;
}

export interface ReplayOptions {
  /** Called after each message, for progress display. */
  onProgress?: (progress: ReplayProgress) => void;
}

/**
 * Replays a recorded event stream through the same ingestor the live observer uses, in file order. Stops
 * at the first message that fails, naming its line id. While the database applies one message, the next
 * is read and prepared (parsed, validated, hashed, a block's rows decoded); it is applied only once the
 * previous one succeeded.
 */
export async function replayFile(
  ingestor: Ingestor,
  file: string,
  options: ReplayOptions = {},
): Promise<ReplayStats> {
  const totalBytes = await fileSize(file);
  const started = performance.now();
  const stats: ReplayStats = { messages: 0, duplicates: 0, skipped: 0, blocks: 0, seconds: 0 };
  let inFlight: Promise<void> | undefined;
  let writesSent: Promise<unknown> | undefined;
  for await (const message of readTsv(file)) {
    const failed = (err: unknown) =>
      new Error(`message ${message.id} (${message.path}) failed: ${(err as Error).message}`, { cause: err });
    // The next message is prepared once the current one's writes are on their way (or it is done), not
    // before: the database then works on them while this thread decodes. Prepared earlier, the decoding
    // ran before the current message's BEGIN was even sent (postgres.js writes statements under 1 KB on
    // the next turn of the event loop), so the two sides took turns instead of overlapping.
    if (writesSent) {
      await writesSent;
      // let postgres.js write the last (small) statements before this thread is busy
      await new Promise((resolve) => setImmediate(resolve));
    }
    let prepared: PreparedMessage | undefined;
    let invalid: unknown;
    try {
      prepared = ingestor.prepare(message.path, message.payload, message.receivedAt);
    } catch (err) {
      invalid = err;
    }
    await inFlight;
    if (!prepared) throw failed(invalid);
    let sent!: () => void;
    const sentSignal = new Promise<void>((resolve) => (sent = resolve));
    inFlight = ingestor.enqueue(prepared, sent).then(
      (outcome) => {
        stats.messages++;
        if (outcome === 'duplicate' || outcome === 'reannounced') stats.duplicates++;
        if (outcome === 'skipped') stats.skipped++;
        if (message.path === '/new_block') stats.blocks++;
        stats.seconds = (performance.now() - started) / 1000;
        options.onProgress?.({ bytesRead: message.bytesRead, totalBytes, stats });
      },
      (err: unknown) => {
        throw failed(err);
      },
    );
    // awaited with the next message (or after the loop); until then a failure must not count as unhandled
    inFlight.catch(() => {});
    writesSent = Promise.race([sentSignal, inFlight.catch(() => {})]);
  }
  await inFlight;
  // the tables' statistics, if an ANALYZE was due, are fresh for whatever reads the index next
  await ingestor.settled();
  stats.seconds = (performance.now() - started) / 1000;
  return stats;
}

/** Writes the raw message log as a TSV that `replayFile` (and the original API's importer) can read. */
export async function exportFile(store: Store, file: string): Promise<number> {
  const out = createWriteStream(file, { encoding: 'utf8' });
  let count = 0;
  let lastId = 0;
  for (;;) {
    const rows = await readLoggedMessages(store.sql, lastId, 500);
    if (rows.length === 0) break;
    for (const row of rows) {
      const line = formatTsvLine({
        id: String(row.id),
        receivedAt: row.received_at,
        path: row.path,
        payload: row.payload,
      });
      if (!out.write(line)) await once(out, 'drain');
      count++;
    }
    lastId = rows[rows.length - 1].id;
  }
  out.end();
  await once(out, 'finish');
  return count;
}
