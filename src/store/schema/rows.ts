import type {
  blockColumns,
  chainTipColumns,
  decodedTxColumns,
  eventColumns,
  mempoolTxColumns,
  microblockColumns,
  minerRewardColumns,
  principalTxColumns,
  RowOf,
  smartContractColumns,
  txColumns,
} from './tables.js';

// Row shapes of the tables ingest writes, derived from their column lists (schema/tables.ts).

export type BlockRow = RowOf<typeof blockColumns>;
/** The decoded transaction columns shared by `txs` and `mempool_txs`. */
export type DecodedTxColumns = RowOf<typeof decodedTxColumns>;
export type TxRow = RowOf<typeof txColumns>;
export type MempoolTxRow = RowOf<typeof mempoolTxColumns>;
export type EventRow = RowOf<typeof eventColumns>;
export type SmartContractRow = RowOf<typeof smartContractColumns>;
export type MinerRewardRow = RowOf<typeof minerRewardColumns>;
export type PrincipalTxRow = RowOf<typeof principalTxColumns>;
export type MicroblockRow = RowOf<typeof microblockColumns>;
/** Where the chain's tip is (schema/tables.ts `chainTipColumns`). */
export type ChainTip = RowOf<typeof chainTipColumns>;

/** Everything one block (or one batch of microblocks) adds to the index. */
export interface ChainRows {
  txs: TxRow[];
  events: EventRow[];
  smartContracts: SmartContractRow[];
  principalTxs: PrincipalTxRow[];
}
