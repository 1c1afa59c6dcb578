import { AsyncLocalStorage } from 'node:async_hooks';
import type { Database, Sql, TransactionSql } from './db.js';
import { transactionSettled } from './write/bulk.js';

/**
 * The one owner of the database client. `sql` is the client of the transaction in progress when called
 * inside `transaction()` (so helpers join it instead of opening another), else the pool.
 */
export class Store {
  private readonly current = new AsyncLocalStorage<TransactionSql>();

  constructor(readonly db: Database) {}

  get engine() {
    return this.db.engine;
  }

  get sql(): Sql {
    return (this.current.getStore() as unknown as Sql | undefined) ?? this.db.sql;
  }

  /** Runs `fn` in a transaction (or inside the one already open); rolls back if it throws. */
  async transaction<T>(fn: (sql: TransactionSql) => Promise<T>): Promise<T> {
    const open = this.current.getStore();
    if (open) return fn(open);
    return this.db.sql.begin((tx) =>
      this.current.run(tx, () => fn(tx).finally(() => transactionSettled(tx))),
    ) as Promise<T>;
  }

  close(): Promise<void> {
    return this.db.close();
  }
}
