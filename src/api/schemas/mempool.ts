import Type, { type Static, type TSchema } from 'typebox';
import { Nullable } from './common.js';

const Percentiles = Type.Object(
  {
    p25: Nullable(Type.Number()),
    p50: Nullable(Type.Number()),
    p75: Nullable(Type.Number()),
    p95: Nullable(Type.Number()),
  },
  {
    title: 'MempoolPercentiles',
    description:
      'Continuous percentiles (linear interpolation, may be fractional); null when the type has no pending transaction',
  },
);
type Percentiles = Static<typeof Percentiles>;

/** One member per transaction type the statistics report, in upstream's key order. */
const perStatsType = <T extends TSchema>(schema: T) =>
  Type.Object({
    token_transfer: schema,
    smart_contract: schema,
    contract_call: schema,
    poison_microblock: schema,
  });

export const MempoolStats = Type.Object(
  {
    tx_type_counts: perStatsType(Type.Integer()),
    tx_simple_fee_averages: perStatsType(Percentiles),
    tx_ages: perStatsType(Percentiles),
    tx_byte_sizes: perStatsType(Percentiles),
  },
  {
    title: 'MempoolStats',
    description:
      'Pending transactions per type: counts, and p25/p50/p75/p95 of the fee (µSTX), the age in blocks and the size in bytes',
  },
);
export type MempoolStats = Static<typeof MempoolStats>;

const FeePriorities = Type.Object(
  {
    no_priority: Type.Integer(),
    low_priority: Type.Integer(),
    medium_priority: Type.Integer(),
    high_priority: Type.Integer(),
  },
  {
    title: 'MempoolFeePriorities',
    description: 'Fee estimates in µSTX: the rounded p25/p50/p75/p95 of pending transaction fees',
  },
);
export type FeePriorities = Static<typeof FeePriorities>;

export const MempoolFees = Type.Object(
  {
    all: FeePriorities,
    token_transfer: Type.Optional(FeePriorities),
    contract_call: Type.Optional(FeePriorities),
    smart_contract: Type.Optional(FeePriorities),
  },
  {
    title: 'MempoolFees',
    description:
      'Fee priorities over every pending transaction (`all`, zeros when the mempool is empty) and per type; a type without pending transactions is left out',
  },
);
export type MempoolFees = Static<typeof MempoolFees>;
