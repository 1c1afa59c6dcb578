import { ingestLagBlocks, type DatabaseRole, type IngestStatus } from '../../store/read/status.js';
import type { Readiness, ServerStatus } from '../schemas/status.js';

// The ingest status → `GET /extended`; what a readiness check found → `GET /ready` (the check itself, its
// queries and timeouts, is in routes/status.ts).

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

/** What one readiness check found: the database's answers, or why it gave none. */
export type ReadinessCheck = { engine: string; observer?: Readiness['observer'] } & (
  | { error: string }
  | {
      role: DatabaseRole;
      /** names of the migrations this version knows that the database has not applied */
      pendingMigrations: string[];
      /** null when the ingest status could not be read (e.g. before the first migration) */
      ingest: IngestStatus | null;
      /** when reads come from a replica and the primary is known: its tip, null when it did not answer */
      primaryTip?: IngestStatus | null;
    }
);

function ingestLag(ingest: IngestStatus): NonNullable<Readiness['ingest']> {
  return {
    stacks_tip_height: ingest.block_height,
    stacks_tip_burn_height: ingest.tip_burn_block_height,
    burn_tip_height: ingest.burn_block_height,
    lag_blocks: ingestLagBlocks(ingest),
    last_message_at: ingest.last_message_at?.toISOString() ?? null,
    seconds_since_last_message: ingest.seconds_since_last_message,
  };
}

function primaryState(tip: IngestStatus | null, ingest: IngestStatus | null): Readiness['primary'] {
  if (!tip) return { reachable: false, stacks_tip_height: null, blocks_behind: null };
  return {
    reachable: true,
    stacks_tip_height: tip.block_height,
    blocks_behind: ingest ? tip.block_height - ingest.block_height : null,
  };
}

/**
 * Ready: the database answered, every migration is applied, and ingest in this process is not stuck (ingest
 * lag is reported, not judged).
 */
export function readinessReport(check: ReadinessCheck): Readiness {
  const observer = check.observer && { observer: check.observer };
  if ('error' in check) {
    return {
      status: 'not_ready',
      database: {
        reachable: false,
        engine: check.engine,
        role: null,
        replay_lag_seconds: null,
        error: check.error,
      },
      migrations: { applied: false, pending: [] },
      ingest: null,
      ...observer,
    };
  }
  const { role, pendingMigrations, ingest, primaryTip } = check;
  const migrated = pendingMigrations.length === 0;
  return {
    status: migrated && !check.observer?.stalled ? 'ready' : 'not_ready',
    database: {
      reachable: true,
      engine: check.engine,
      role: role.in_recovery ? 'replica' : 'primary',
      replay_lag_seconds: role.replay_lag_seconds,
    },
    migrations: { applied: migrated, pending: pendingMigrations },
    ingest: ingest && ingestLag(ingest),
    ...(primaryTip !== undefined ? { primary: primaryState(primaryTip, ingest) } : {}),
    ...observer,
  };
}
