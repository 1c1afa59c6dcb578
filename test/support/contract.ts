// The ten endpoints of the contract (seed §4), for the tests that go over all of them (OpenAPI, docs page,
// official client). Only 4.9 and 4.10 are deprecated (seed §9).

export interface ContractEndpoint {
  /** Contract section. */
  section: string;
  /** OpenAPI path, as the official client names it. */
  path: string;
  /** Fastify route pattern. */
  route: string;
  deprecated: boolean;
  /** Path and query parameters the contract lists. */
  params: string[];
}

export const CONTRACT_ENDPOINTS: ContractEndpoint[] = [
  {
    section: '4.1',
    path: '/extended/v1/address/{principal}/balances',
    route: '/extended/v1/address/:principal/balances',
    deprecated: false,
    params: ['principal', 'unanchored', 'until_block'],
  },
  {
    section: '4.2',
    path: '/extended/v1/tx/{tx_id}',
    route: '/extended/v1/tx/:tx_id',
    deprecated: false,
    params: ['tx_id'],
  },
  {
    section: '4.3',
    path: '/extended/v2/blocks/{height_or_hash}',
    route: '/extended/v2/blocks/:height_or_hash',
    deprecated: false,
    params: ['height_or_hash'],
  },
  {
    section: '4.4',
    path: '/extended/v1/tx/multiple',
    route: '/extended/v1/tx/multiple',
    deprecated: false,
    params: ['tx_id'],
  },
  {
    section: '4.5',
    path: '/extended/v1/tx/mempool/stats',
    route: '/extended/v1/tx/mempool/stats',
    deprecated: false,
    params: [],
  },
  {
    section: '4.6',
    path: '/extended/v2/mempool/fees',
    route: '/extended/v2/mempool/fees',
    deprecated: false,
    params: [],
  },
  {
    section: '4.7',
    path: '/extended/v2/smart-contracts/status',
    route: '/extended/v2/smart-contracts/status',
    deprecated: false,
    params: ['contract_id'],
  },
  {
    section: '4.8',
    path: '/extended/v1/address/{principal}/transactions_with_transfers',
    route: '/extended/v1/address/:principal/transactions_with_transfers',
    deprecated: false,
    params: ['principal', 'limit', 'offset', 'height', 'unanchored', 'until_block'],
  },
  {
    section: '4.9',
    path: '/extended/v1/address/{principal}/{tx_id}/with_transfers',
    route: '/extended/v1/address/:principal/:tx_id/with_transfers',
    deprecated: true,
    params: ['principal', 'tx_id'],
  },
  {
    section: '4.10',
    path: '/extended/v1/block/by_burn_block_height/{burn_block_height}',
    route: '/extended/v1/block/by_burn_block_height/:burn_block_height',
    deprecated: true,
    params: ['burn_block_height'],
  },
];
