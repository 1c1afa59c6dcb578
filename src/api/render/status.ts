import type { IngestStatus } from '../../store/read/status.js';
import type { ServerStatus } from '../schemas/status.js';

// The ingest status → `GET /extended` (the readiness answer is built where it is checked, routes/status.ts).

function chainTip(status: IngestStatus): ServerStatus['chain_tip'] {
  if (status.block_height === 0 && status.index_block_hash === '') return null;
  return {
    block_height: status.block_height,
    block_hash: status.block_hash,
    index_block_hash: status.index_block_hash,
    ...(status.microblock_hash
      ? { microblock_hash: status.microblock_hash, microblock_sequence: status.microblock_sequence }
      : {}),
    burn_block_height: status.burn_block_height,
  };
}

export function serverStatus(apiVersion: string, status: IngestStatus): ServerStatus {
  return { server_version: `stacks-read-api ${apiVersion}`, status: 'ready', chain_tip: chainTip(status) };
}
