import {
  MempoolTypeGroup,
  roundHalfEven,
  type MempoolAggregates,
  type Percentiles,
} from '../../store/read/mempool.js';
import type { FeePriorities, MempoolFees, MempoolStats } from '../schemas/mempool.js';

// Mempool aggregates → the statistics and fee priorities (contract 2.9, 2.10).

const STATS_TYPES = ['token_transfer', 'smart_contract', 'contract_call', 'poison_microblock'] as const;
const FEE_TYPES = ['token_transfer', 'contract_call', 'smart_contract'] as const;

export function mempoolStats(aggregates: MempoolAggregates): MempoolStats {
  const pick = <T>(value: (type: (typeof STATS_TYPES)[number]) => T) => ({
    token_transfer: value('token_transfer'),
    smart_contract: value('smart_contract'),
    contract_call: value('contract_call'),
    poison_microblock: value('poison_microblock'),
  });
  const group = (type: (typeof STATS_TYPES)[number]) => aggregates.groups.get(MempoolTypeGroup[type]);
  const none: Percentiles = { p25: null, p50: null, p75: null, p95: null };
  return {
    tx_type_counts: pick((type) => group(type)?.tx_count ?? 0),
    tx_simple_fee_averages: pick((type) => group(type)?.fee_rate ?? none),
    tx_ages: pick((type) => group(type)?.age ?? none),
    tx_byte_sizes: pick((type) => group(type)?.tx_size ?? none),
  };
}

/** Upstream rounds the percentiles in SQL; an empty set (nulls) is serialized as 0. */
function feePriorities(p: Percentiles): FeePriorities {
  const round = (value: number | null) => (value === null ? 0 : roundHalfEven(value));
  return {
    no_priority: round(p.p25),
    low_priority: round(p.p50),
    medium_priority: round(p.p75),
    high_priority: round(p.p95),
  };
}

export function mempoolFees(aggregates: MempoolAggregates): MempoolFees {
  const fees: MempoolFees = { all: feePriorities(aggregates.all_fee_rate) };
  for (const type of FEE_TYPES) {
    const group = aggregates.groups.get(MempoolTypeGroup[type]);
    if (group && group.tx_count > 0) fees[type] = feePriorities(group.fee_rate);
  }
  return fees;
}
