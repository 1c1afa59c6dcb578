/**
 * A read that may be answered together with others: the reads asked within one turn of the event loop (the
 * requests parsed from the sockets in one poll) with the same group key are answered by one call of
 * `readMany` (one statement), a read alone in its group by `readOne` (its own, simpler statement). Why: a
 * cold read is one statement per request, and a statement's fixed costs (protocol messages on both sides,
 * executor start-up) are a large part of it (bench finding F-read-batched-reads). The wait
 * costs no latency: the statement is sent once the current turn's callbacks have run (`setImmediate`), where
 * it would have waited for them anyway. A failed statement rejects every read of its batch.
 *
 * `readMany` answers each ask of its list, in the list's order (same length); the asks of one batch share
 * their group key, so it may take what they share from the first.
 */
export function batchedReads<Ask, Answer>(
  groupKeyOf: (ask: Ask) => string,
  readOne: (ask: Ask) => Promise<Answer>,
  readMany: (asks: Ask[]) => Promise<Answer[]>,
): (ask: Ask) => Promise<Answer> {
  interface Waiting {
    ask: Ask;
    resolve(answer: Answer): void;
    reject(err: unknown): void;
  }
  /** reads waiting for the end of the turn, by group key */
  const batches = new Map<string, Waiting[]>();

  async function read(waiting: Waiting[]) {
    if (waiting.length === 1) {
      waiting[0].resolve(await readOne(waiting[0].ask));
      return;
    }
    const answers = await readMany(waiting.map((w) => w.ask));
    for (const [i, w] of waiting.entries()) w.resolve(answers[i]);
  }

  function flush(key: string) {
    const waiting = batches.get(key)!;
    batches.delete(key);
    read(waiting).catch((err: unknown) => {
      for (const w of waiting) w.reject(err);
    });
  }

  return (ask) =>
    new Promise((resolve, reject) => {
      const key = groupKeyOf(ask);
      let waiting = batches.get(key);
      if (!waiting) {
        waiting = [];
        batches.set(key, waiting);
        setImmediate(flush, key);
      }
      waiting.push({ ask, resolve, reject });
    });
}

/** The distinct keys of a batch's asks, in first-asked order (what its statement reads). */
export function distinctKeys<Ask>(asks: readonly Ask[], keyOf: (ask: Ask) => string): Ask[] {
  return [...new Map(asks.map((ask) => [keyOf(ask), ask])).values()];
}

/**
 * The answer of each ask from the rows a batch's statement read (the first row of a key wins; undefined for a
 * key no row has), made by `answerOf` for each ask (the row itself by default: asks of one key then share it;
 * a copy for callers that may keep or change what they are given).
 */
export function answersByKey<Ask, Row, Answer = Row>(
  asks: readonly Ask[],
  keyOfAsk: (ask: Ask) => string,
  rows: readonly Row[],
  keyOfRow: (row: Row) => string,
  answerOf: (row: Row) => Answer = (row) => row as unknown as Answer,
): (Answer | undefined)[] {
  const byKey = new Map<string, Row>();
  for (const row of rows) {
    const key = keyOfRow(row);
    if (!byKey.has(key)) byKey.set(key, row);
  }
  return asks.map((ask) => {
    const row = byKey.get(keyOfAsk(ask));
    return row === undefined ? undefined : answerOf(row);
  });
}
