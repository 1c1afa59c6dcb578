import type { Sql } from '../db.js';

// The demo chain's row (migrations/032_demo_chain.sql): written before its first message and after its last.

/** The demo chain of `blocks` blocks is being indexed (a second call, for a demo indexed again, keeps the row). */
export async function demoChainStarted(sql: Sql, blocks: number): Promise<void> {
  await sql`INSERT INTO demo_chain (blocks) VALUES (${blocks}) ON CONFLICT (only_row) DO NOTHING`;
}

/** Every message of the demo chain is applied. */
export async function demoChainCompleted(sql: Sql): Promise<void> {
  await sql`UPDATE demo_chain SET completed_at = now() WHERE completed_at IS NULL`;
}
