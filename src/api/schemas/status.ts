import Type, { type Static } from 'typebox';
import { Nullable } from './common.js';

export const ServerStatus = Type.Object(
  {
    server_version: Type.String({ description: 'e.g. `stacks-read-api v0.1.0 (main:abc1234)`' }),
    status: Type.String({ description: '`ready` when the service answers' }),
    chain_tip: Type.Union(
      [
        Type.Object({
          block_height: Type.Integer(),
          block_hash: Type.String(),
          index_block_hash: Type.String(),
          microblock_hash: Type.Optional(
            Type.String({ description: 'present while a microblock extends the tip' }),
          ),
          microblock_sequence: Type.Optional(Type.Integer()),
          burn_block_height: Type.Integer({ description: 'highest burn block announced by the node' }),
        }),
        Type.Null(),
      ],
      { description: 'null before the first block' },
    ),
  },
  { title: 'ServerStatus', description: 'Server version, status and chain tip' },
);
export type ServerStatus = Static<typeof ServerStatus>;

export const Health = Type.Object(
  { status: Type.Literal('ok') },
  { title: 'Health', description: 'The process is up (nothing else is checked)' },
);

export const Readiness = Type.Object(
  {
    status: Type.Union([Type.Literal('ready'), Type.Literal('not_ready')]),
    database: Type.Object({
      reachable: Type.Boolean(),
      engine: Type.String({ description: '`postgres` or `pglite`' }),
      role: Nullable(
        Type.String({ description: '`primary`, or `replica` on a hot standby; null if unreachable' }),
      ),
      replay_lag_seconds: Nullable(
        Type.Number({
          description:
            'On a replica: seconds since the last replayed transaction, 0 when all received WAL is replayed',
        }),
      ),
      error: Type.Optional(Type.String()),
    }),
    migrations: Type.Object({
      applied: Type.Boolean({ description: 'every migration this version knows is applied' }),
      pending: Type.Array(Type.String()),
    }),
    ingest: Nullable(
      Type.Object({
        stacks_tip_height: Type.Integer(),
        stacks_tip_burn_height: Nullable(Type.Integer({ description: 'burn block holding the Stacks tip' })),
        burn_tip_height: Type.Integer({ description: 'highest burn block announced by the node' }),
        lag_blocks: Nullable(
          Type.Integer({
            description:
              'burn_tip_height − stacks_tip_burn_height: burn blocks announced past the Stacks tip (0–1 is normal)',
          }),
        ),
        last_message_at: Nullable(
          Type.String({
            description:
              'when this indexer received the newest observer message, live or replayed (ISO; not the time a replayed file records)',
          }),
        ),
        seconds_since_last_message: Nullable(
          Type.Number({ description: 'seconds since last_message_at, by the database clock' }),
        ),
      }),
    ),
    primary: Type.Optional(
      Type.Object(
        {
          reachable: Type.Boolean(),
          stacks_tip_height: Nullable(Type.Integer()),
          blocks_behind: Nullable(
            Type.Integer({ description: 'primary tip height − the tip height read here' }),
          ),
        },
        { description: 'present when reads come from a replica and the primary is configured' },
      ),
    ),
    observer: Type.Optional(
      Type.Object(
        {
          waiting_seconds: Type.Number({
            description:
              'how long the oldest event-observer message has waited without any message being taken since (0: none waits)',
          }),
          stalled: Type.Boolean({
            description: 'waiting_seconds is past INGEST_STALL_SECONDS: ingest is stuck',
          }),
        },
        { description: 'present when this process runs the event observer' },
      ),
    ),
  },
  {
    title: 'Readiness',
    description:
      'Ready when the database answers, every migration is applied and ingest in this process is not stuck; ingest lag is reported, not judged',
  },
);
export type Readiness = Static<typeof Readiness>;
