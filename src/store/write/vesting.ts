import type { Sql, TransactionSql } from '../db.js';
import { bulkInsert } from './bulk.js';
import type { ColumnSpec } from '../schema/tables.js';

export interface VestingRow {
  address: string;
  value: string;
  block: number;
}

const vestingColumns: ColumnSpec<VestingRow> = [
  ['address', 'text'],
  ['value', 'numeric'],
  ['block', 'int4'],
];

/** sha256 of the vesting file the table holds, or null when none was loaded. */
export async function vestingSourceHash(sql: Sql): Promise<string | null> {
  const [row] = await sql<{ sha256: string }[]>`SELECT sha256 FROM token_offering_source`;
  return row?.sha256 ?? null;
}

/** Replaces the whole vesting schedule with the rows of one file. */
export async function replaceVestingSchedule(
  sql: TransactionSql,
  rows: VestingRow[],
  source: { file: string; sha256: string },
): Promise<void> {
  await sql`DELETE FROM token_offering_locked`;
  const batch = 10_000;
  for (let i = 0; i < rows.length; i += batch) {
    await bulkInsert(sql, 'token_offering_locked', vestingColumns, rows.slice(i, i + batch));
  }
  await sql`
    INSERT INTO token_offering_source (id, sha256, file, row_count)
    VALUES (true, ${source.sha256}, ${source.file}, ${rows.length})
    ON CONFLICT (id) DO UPDATE SET sha256 = excluded.sha256, file = excluded.file,
      row_count = excluded.row_count, loaded_at = now()`;
}
