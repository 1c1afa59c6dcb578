import type { Sql } from '../db.js';
import { statement } from '../statement.js';

// A principal's fungible token balances, one page (docs/upstream.md C.14): from the running totals ingest keeps
// (ft_balances), the tokens whose balance (received − sent) is above 0, by lowercased asset identifier. The
// page is read from the principal's rows: bounded by the tokens it ever moved, not by the chain.

export interface FtBalance {
  asset_identifier: string;
  /** received − sent, a decimal string */
  balance: string;
}

type Row = FtBalance & { total: string };

const ftBalances = statement<Row, [principal: string, limit: number, offset: number]>(`
  SELECT f.asset_identifier, (f.total_received - f.total_sent)::text AS balance, count(*) OVER () AS total
  FROM ft_balances f
  WHERE f.principal = $1 AND f.total_received - f.total_sent > 0
  ORDER BY lower(f.asset_identifier), f.asset_identifier
  LIMIT $2 OFFSET $3`);

export interface FtBalancePage {
  /** how many tokens the principal holds; 0 on an empty page */
  total: number;
  balances: FtBalance[];
}

/** A page of the fungible tokens a principal holds (balance above 0), at the tip. One statement. */
export async function listFtBalances(
  sql: Sql,
  principal: string,
  page: { limit: number; offset: number },
): Promise<FtBalancePage> {
  const rows = await ftBalances(sql, principal, page.limit, page.offset);
  return {
    total: rows.length > 0 ? Number(rows[0].total) : 0,
    balances: rows.map(({ asset_identifier, balance }) => ({ asset_identifier, balance })),
  };
}
