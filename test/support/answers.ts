import type { FastifyInstance } from 'fastify';
import type { Store } from '../../src/store/store.js';
import { get } from './api.js';

// What the read API answers about a whole chain: a URL of each of the ten endpoints for every block, burn
// height, transaction, principal and contract the store holds (and tx/multiple over every tx, in pages). Two
// indexes of one chain must answer every one of these alike: status, body and ETag.

/** Every URL of the ten endpoints that names something the store holds. */
export async function everyEndpointUrl(store: Store): Promise<string[]> {
  const sql = store.sql;
  const blocks = await sql<{ block_height: number; block_hash: string; index_block_hash: string }[]>`
    SELECT block_height, block_hash, index_block_hash FROM blocks ORDER BY block_height, index_block_hash`;
  const burnHeights = await sql<{ h: number }[]>`
    SELECT DISTINCT burn_block_height AS h FROM blocks ORDER BY h`;
  const txs = await sql<{ tx_id: string }[]>`
    SELECT tx_id FROM txs UNION SELECT tx_id FROM mempool_txs ORDER BY tx_id`;
  const principalTxs = await sql<{ principal: string; tx_id: string }[]>`
    SELECT DISTINCT ON (principal) principal, tx_id FROM principal_txs ORDER BY principal, tx_id`;
  const contracts = await sql<{ contract_id: string }[]>`
    SELECT DISTINCT contract_id FROM smart_contracts ORDER BY contract_id`;

  const urls = ['/extended/v1/tx/mempool/stats', '/extended/v2/mempool/fees'];
  for (const b of blocks) {
    urls.push(
      `/extended/v2/blocks/${b.block_height}`,
      `/extended/v2/blocks/${b.block_hash}`,
      `/extended/v2/blocks/${b.index_block_hash}`,
    );
  }
  for (const { h } of burnHeights) urls.push(`/extended/v1/block/by_burn_block_height/${h}`);
  for (const { tx_id } of txs) urls.push(`/extended/v1/tx/${tx_id}`);
  for (let i = 0; i < txs.length; i += 20) {
    const page = txs.slice(i, i + 20).map((t) => `tx_id=${t.tx_id}`);
    urls.push(`/extended/v1/tx/multiple?${page.join('&')}`);
  }
  for (const { principal, tx_id } of principalTxs) {
    urls.push(
      `/extended/v1/address/${principal}/balances`,
      `/extended/v1/address/${principal}/transactions_with_transfers?limit=50`,
      `/extended/v1/address/${principal}/${tx_id}/with_transfers`,
    );
  }
  for (let i = 0; i < contracts.length; i += 10) {
    const page = contracts.slice(i, i + 10).map((c) => `contract_id=${c.contract_id}`);
    urls.push(`/extended/v2/smart-contracts/status?${page.join('&')}`);
  }
  return urls;
}

export interface Answer {
  status: number;
  etag: string | undefined;
  body: string;
}

/** The answers to `urls`, asked one after another, by URL. */
export async function answersOf(app: FastifyInstance, urls: string[]): Promise<Map<string, Answer>> {
  const answers = new Map<string, Answer>();
  for (const url of urls) {
    const res = await get(app, url);
    answers.set(url, {
      status: res.statusCode,
      etag: res.headers.etag as string | undefined,
      body: res.body,
    });
  }
  return answers;
}
