import { AsyncLocalStorage } from 'node:async_hooks';
import type { Database, Sql, TransactionSql } from './db.js';
import { statementSize, transactionOpened, transactionSettled } from './write/bulk.js';

export interface StoreOptions {
  /**
   * Test switch: how many rows one bulk insert statement carries at most (default 250, store/write/bulk.ts
   * says why); the same rows cut at another size must give the same tables.
   */
  rowsPerStatement?: number;
}

/**
 * The one owner of the database client. `sql` is the client of the transaction in progress when called
 * inside `transaction()` (so helpers join it instead of opening another), else the pool.
 */
export class Store {
  private readonly current = new AsyncLocalStorage<TransactionSql>();

  constructor(
    readonly db: Database,
    private readonly options: StoreOptions = {},
  ) {}

  get engine() {
    return this.db.engine;
  }

  /** How many rows one bulk insert statement of this store's transactions carries (`StoreOptions`). */
  get rowsPerStatement(): number {
    return statementSize(this.options.rowsPerStatement);
  }

  get sql(): Sql {
    return (this.current.getStore() as unknown as Sql | undefined) ?? this.db.sql;
  }

  /**
   * Runs `fn` in a transaction (or inside the one already open); rolls back if it throws, or if it returns
   * while a bulk insert of the transaction is still being sent (store/write/bulk.ts: the rest of its rows
   * would not be written).
   */
  async transaction<T>(fn: (sql: TransactionSql) => Promise<T>): Promise<T> {
    const open = this.current.getStore();
    if (open) return fn(open);
    let work: Promise<T> | undefined;
    try {
      return (await this.db.sql.begin(
        (tx) =>
          (work = this.current.run(tx, async () => {
            transactionOpened(tx, this.options.rowsPerStatement);
            let unfinished = 0;
            let result: T;
            try {
              result = await fn(tx);
            } finally {
              unfinished = transactionSettled(tx);
            }
            if (unfinished > 0) {
              throw new Error(`the transaction's work returned with ${unfinished} bulk insert(s) unfinished`);
            }
            return result;
          })),
      )) as T;
    } catch (err) {
      // postgres.js rejects a transaction the moment its connection closes, while `fn` may still be running
      // (between two statements, or in a test pause): its statements fail from then on
      // (patches/postgres+3.4.9.patch), and the caller's next transaction starts only once it has ended, so
      // two transactions' work never overlaps.
      await work?.catch(() => {});
      throw err;
    }
  }

  close(): Promise<void> {
    return this.db.close();
  }
}
