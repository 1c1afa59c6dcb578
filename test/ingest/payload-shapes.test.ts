import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';
import { decodeTransaction } from '../../src/chain/index.js';
import { generateChain, type GenerateOptions } from '../../src/devnet/chain.js';
import type { RecordedMessage } from '../../src/protocol/tsv.js';
import { fixtureMessages, fixtureNames } from '../support/shared.js';

// The generator's messages have the shape of a node's: per message kind, per event type and per transaction
// payload kind, the key paths a generated chain posts and the types of their values are compared with those
// of recorded node messages of the same era. A 2.x chain (as the generator posts it without a Nakamoto
// height) against the recordings of 2.x nodes; a chain that enters Nakamoto (posted as a 3.x node posts
// it) against the recordings of the 2.5 node (S1) and of the 3.x node (fuzzed-transactions-1). A key path
// the generator posts that no node does, a value type no node uses, or a key path every recording of the
// era carries that the generator leaves out, is a difference; the legitimate ones are listed below, each
// with its reason, and any other fails the test (as does a listed one that no longer occurs).

type Era = '2.x' | 'nakamoto';

/** The recorded chains by the node generation that posted them (read from their messages' keys). */
const RECORDINGS: Record<Era, string[]> = {
  // 2.0 and 2.1 nodes: `contract_abi`, no signer or tenure fields
  '2.x': [
    'mainnet-block0',
    'mainnet-out-of-order-microblock',
    'mainnet-reorg-scenario1',
    'mainnet-reorg-scenario2',
    'mocknet',
    'poisonmicroblock',
  ],
  // a 2.5 node (signer_bitvec, reward_set, cycle_number; still `contract_abi`) and a 3.x node (Nakamoto
  // blocks with signer signatures, `contract_interface`, keys in alphabetical order)
  nakamoto: ['regtest-env-pox-4-stack-stx-in-reward-phase-S1', 'fuzzed-transactions-1'],
};

const GENERATED: Record<Era, GenerateOptions> = {
  '2.x': { blocks: 40, accounts: 16, seed: 'payload-shapes', txsPerBlock: 10, workers: 0 },
  nakamoto: {
    blocks: 36,
    accounts: 16,
    seed: 'payload-shapes',
    txsPerBlock: 8,
    workers: 0,
    nakamotoHeight: 13,
  },
};

/** Key paths and their types (`|` between alternatives) as stacks-core writes them. */
type EncodedShapes = Record<string, Record<string, string>>;

const EVENT_COMMON = {
  '': 'object',
  '.committed': 'boolean',
  '.event_index': 'integer',
  '.txid': 'hex',
  '.type': 'string',
};

/** An event with its type-specific body (`body` keys), as `StacksTransactionEvent::json_serialize` writes it. */
function eventShape(type: string, body: Record<string, string>): EncodedShapes {
  const paths: Record<string, string> = { ...EVENT_COMMON, [`.${type}`]: 'object' };
  for (const [key, t] of Object.entries(body)) paths[`.${type}.${key}`] = t;
  return { [`event:${type}`]: paths };
}

/**
 * Complete shapes from stacks-core's source, for what the recordings of an era lack or show only partly.
 * Events: clarity/src/vm/events.rs (`json_serialize` of each event; the same in 2.x and 3.x nodes, `memo` and
 * the lock's `contract_identifier` added in 2.1). Mempool messages: stacks-node event_dispatcher
 * (`make_new_mempool_txs_payload`: an array of 0x hex; drops: `dropped_txids`, `reason`, `new_txid`, the
 * replacing tx of a ReplaceByFee drop, else null); no 2.x recording holds either.
 */
const SOURCE_SHAPES: EncodedShapes = {
  ...eventShape('stx_transfer_event', {
    sender: 'string',
    recipient: 'string',
    amount: 'string',
    memo: 'string',
  }),
  ...eventShape('stx_mint_event', { recipient: 'string', amount: 'string' }),
  ...eventShape('stx_burn_event', { sender: 'string', amount: 'string' }),
  ...eventShape('stx_lock_event', {
    locked_amount: 'string',
    unlock_height: 'string',
    locked_address: 'string',
    contract_identifier: 'string',
  }),
  ...eventShape('ft_transfer_event', {
    asset_identifier: 'string',
    sender: 'string',
    recipient: 'string',
    amount: 'string',
  }),
  ...eventShape('ft_mint_event', { asset_identifier: 'string', recipient: 'string', amount: 'string' }),
  ...eventShape('ft_burn_event', { asset_identifier: 'string', sender: 'string', amount: 'string' }),
  ...eventShape('nft_transfer_event', {
    asset_identifier: 'string',
    sender: 'string',
    recipient: 'string',
    value: 'clarity-serde',
    raw_value: 'hex',
  }),
  ...eventShape('nft_mint_event', {
    asset_identifier: 'string',
    recipient: 'string',
    value: 'clarity-serde',
    raw_value: 'hex',
  }),
  ...eventShape('nft_burn_event', {
    asset_identifier: 'string',
    sender: 'string',
    value: 'clarity-serde',
    raw_value: 'hex',
  }),
  ...eventShape('contract_event', {
    contract_identifier: 'string',
    topic: 'string',
    value: 'clarity-serde',
    raw_value: 'hex',
  }),
  '/new_mempool_tx': { '': 'array', '[]': 'hex' },
  '/drop_mempool_tx': {
    '': 'object',
    '.dropped_txids': 'array',
    '.dropped_txids[]': 'hex',
    '.reason': 'string',
    '.new_txid': 'hex|null',
  },
};

/**
 * A 3.x node's transaction (stacks-node/src/event_dispatcher/payloads.rs `TransactionEventPayload`: the ABI
 * as `contract_interface`, `vm_error` added), for every payload kind: the 3.x recording (fuzzed-transactions-1)
 * holds only transfers, coinbases and tenure changes, and S1's node (2.5) still wrote `contract_abi`.
 */
const NAKAMOTO_TX: Record<string, string> = {
  '': 'object',
  '.txid': 'hex',
  '.tx_index': 'integer',
  '.status': 'string',
  '.raw_result': 'hex',
  '.raw_tx': 'hex',
  '.contract_interface': 'abi|null',
  '.burnchain_op': 'object|null',
  '.execution_cost': 'object',
  '.execution_cost.read_count': 'integer',
  '.execution_cost.read_length': 'integer',
  '.execution_cost.runtime': 'integer',
  '.execution_cost.write_count': 'integer',
  '.execution_cost.write_length': 'integer',
  '.microblock_sequence': 'integer|null',
  '.microblock_hash': 'hex|null',
  '.microblock_parent_hash': 'hex|null',
  '.vm_error': 'string|null',
};

/**
 * A 3.x node's `/new_microblocks` (epoch 2.x blocks of a chain that later enters Nakamoto; stacks-node
 * event_dispatcher `process_new_microblocks`): no Nakamoto-era recording holds one.
 */
const NAKAMOTO_MICROBLOCKS: Record<string, string> = {
  '': 'object',
  '.parent_index_block_hash': 'hex',
  '.burn_block_hash': 'hex',
  '.burn_block_height': 'integer',
  '.burn_block_timestamp': 'integer',
  '.transactions': 'array',
  '.events': 'array',
};

/**
 * Members the Nakamoto-era recordings leave out only because of their content, added to what they show
 * (not required): both chains are too short for a coinbase to mature (stacks-node event_dispatcher's
 * matured reward: amounts as decimal strings, the block hashes 0x hex).
 */
const NAKAMOTO_PARTIAL: EncodedShapes = {
  '/new_block': {
    '.matured_miner_rewards[]': 'object',
    '.matured_miner_rewards[].recipient': 'string',
    '.matured_miner_rewards[].miner_address': 'string',
    '.matured_miner_rewards[].coinbase_amount': 'string',
    '.matured_miner_rewards[].tx_fees_anchored': 'string',
    '.matured_miner_rewards[].tx_fees_streamed_confirmed': 'string',
    '.matured_miner_rewards[].tx_fees_streamed_produced': 'string',
    '.matured_miner_rewards[].from_stacks_block_hash': 'hex',
    '.matured_miner_rewards[].from_index_consensus_hash': 'hex',
  },
};

/** The source shapes of an era: complete (they also decide what is required) and partial ones. */
function sourceSources(era: Era, generatedGroups: Iterable<string>): { shapes: Shapes; complete: boolean }[] {
  const complete: EncodedShapes = { ...SOURCE_SHAPES };
  if (era === 'nakamoto') {
    for (const group of generatedGroups) if (group.startsWith('tx:')) complete[group] = NAKAMOTO_TX;
    complete['/new_microblocks'] = NAKAMOTO_MICROBLOCKS;
  }
  const sources = [{ shapes: sourceShapes(complete), complete: true }];
  if (era === 'nakamoto') sources.push({ shapes: sourceShapes(NAKAMOTO_PARTIAL), complete: false });
  return sources;
}

const VALUE_SERDE =
  'the serde dump of the Clarity value (Rust enum layout: {"UInt":1}, {"Tuple":{"data_map":..,"type_signature":..}}) ' +
  'is read by neither the original API nor this indexer (both decode raw_value); the generator does not ' +
  "reimplement Clarity's type-signature serialization";

const CLARITY_2 =
  "the generated 2.x chain deploys Clarity 2 contracts (and locks with pox-4): a 2.1+ node's ABI names the " +
  'epoch and Clarity version (S1, a 2.5 node, does); the 2.x recordings with deploys are 2.0 nodes';
const NO_MAPS =
  'the generated contracts define no data map, so their ABI has `maps: []` (the member is posted, an ABI ' +
  "with maps is the recordings' content, not another shape)";

/**
 * The differences between the generator and the nodes that are legitimate, by `era group path kind`. `extra`:
 * the generator posts a key path no recording of the era has; `missing`: every recording of the era has it,
 * the generator does not; `type:<t>`: the generator posts a value of type <t> there, no recording does.
 */
const LEGITIMATE: Record<string, string> = {
  '2.x abi .clarity_version extra': CLARITY_2,
  '2.x abi .epoch extra': CLARITY_2,
  '2.x tx:smart_contract .burnchain_op extra':
    'a 2.1 node posts burnchain_op (null for a Stacks tx) on every transaction; the one 2.1 recording ' +
    '(poisonmicroblock) deploys no contract, the 2.0 ones predate the member',
  ...Object.fromEntries(
    (['2.x', 'nakamoto'] as const).flatMap((era) =>
      ['.maps[]', '.maps[].key', '.maps[].name', '.maps[].value'].map((path) => [
        `${era} abi ${path} missing`,
        NO_MAPS,
      ]),
    ),
  ),
  '2.x event:contract_event .contract_event.value missing': VALUE_SERDE,
  '2.x event:nft_mint_event .nft_mint_event.value missing': VALUE_SERDE,
  '2.x event:nft_transfer_event .nft_transfer_event.value missing': VALUE_SERDE,
  '2.x event:nft_burn_event .nft_burn_event.value missing': VALUE_SERDE,
  'nakamoto event:contract_event .contract_event.value missing': VALUE_SERDE,
  'nakamoto event:nft_mint_event .nft_mint_event.value missing': VALUE_SERDE,
  'nakamoto event:nft_transfer_event .nft_transfer_event.value missing': VALUE_SERDE,
  'nakamoto event:nft_burn_event .nft_burn_event.value missing': VALUE_SERDE,
};

// --- shapes ----------------------------------------------------------------------------------------------

/** group -> key path -> value types */
type Shapes = Map<string, Map<string, Set<string>>>;

function add(shapes: Shapes, group: string, path: string, type: string) {
  let paths = shapes.get(group);
  if (!paths) shapes.set(group, (paths = new Map()));
  let types = paths.get(path);
  if (!types) paths.set(path, (types = new Set()));
  types.add(type);
}

/** A JSON value's type: hex strings (`0x...`) apart from other text, integers apart from other numbers. */
function typeOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'string') return value.startsWith('0x') ? 'hex' : 'string';
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number';
  return typeof value;
}

/**
 * A contract ABI type (stacks-core's ContractInterfaceAtomType as JSON) as a Clarity type expression, e.g.
 * `(response (optional (string-ascii 12)) uint)`; throws on anything that is not one.
 */
function abiTypeExpression(type: unknown): string {
  const atoms: Record<string, string> = {
    int128: 'int',
    uint128: 'uint',
    bool: 'bool',
    principal: 'principal',
    trait_reference: '<trait>',
    none: 'none',
  };
  if (typeof type === 'string' && Object.hasOwn(atoms, type)) return atoms[type];
  const entries = type !== null && typeof type === 'object' ? Object.entries(type) : [];
  if (entries.length !== 1) throw new Error(`not an ABI type: ${JSON.stringify(type)}`);
  const [[kind, body]] = entries as [[string, Record<string, unknown>]];
  const length = (b: Record<string, unknown>) => {
    if (!Number.isInteger(b?.length) || Object.keys(b).length !== (kind === 'list' ? 2 : 1)) {
      throw new Error(`not an ABI ${kind} type: ${JSON.stringify(type)}`);
    }
    return b.length as number;
  };
  switch (kind) {
    case 'buffer':
      return `(buff ${length(body)})`;
    case 'string-ascii':
    case 'string-utf8':
      return `(${kind} ${length(body)})`;
    case 'optional':
      return `(optional ${abiTypeExpression(body)})`;
    case 'list':
      return `(list ${length(body)} ${abiTypeExpression(body.type)})`;
    case 'response':
      if (Object.keys(body).sort().join() !== 'error,ok')
        throw new Error(`not an ABI response: ${JSON.stringify(type)}`);
      return `(response ${abiTypeExpression(body.ok)} ${abiTypeExpression(body.error)})`;
    case 'tuple': {
      if (!Array.isArray(body)) throw new Error(`not an ABI tuple: ${JSON.stringify(type)}`);
      const members = (body as { name?: unknown; type?: unknown }[]).map((m) => {
        if (typeof m.name !== 'string' || Object.keys(m).length !== 2) {
          throw new Error(`not an ABI tuple member: ${JSON.stringify(m)}`);
        }
        return `(${m.name} ${abiTypeExpression(m.type)})`;
      });
      return `(tuple ${members.join(' ')})`;
    }
    default:
      throw new Error(`not an ABI type: ${JSON.stringify(type)}`);
  }
}

/** Where a contract ABI holds a type (compared as a type expression, not as nested keys). */
const ABI_TYPE_PATH =
  /\.(args\[\]\.type|outputs\.type|variables\[\]\.type|maps\[\]\.(key|value)|non_fungible_tokens\[\]\.type)$/;
/** The serde dump of a Clarity value in an event body (opaque: its keys follow the value). */
const CLARITY_SERDE_PATH = /^\.(contract_event|nft_\w+_event)\.value$/;

function walk(shapes: Shapes, group: string, path: string, value: unknown) {
  if (group === 'abi' && ABI_TYPE_PATH.test(path)) {
    let type = 'abi-type';
    try {
      abiTypeExpression(value);
    } catch (error) {
      type = `invalid ${(error as Error).message}`;
    }
    return add(shapes, group, path, type);
  }
  if (
    group.startsWith('event:') &&
    CLARITY_SERDE_PATH.test(path) &&
    value !== null &&
    typeof value === 'object'
  ) {
    return add(shapes, group, path, 'clarity-serde');
  }
  add(shapes, group, path, typeOf(value));
  if (Array.isArray(value)) {
    for (const item of value) walk(shapes, group, `${path}[]`, item);
    return;
  }
  if (value === null || typeof value !== 'object') return;
  for (const [key, member] of Object.entries(value)) {
    const memberPath = `${path}.${key}`;
    if (
      group.startsWith('tx:') &&
      (key === 'contract_abi' || key === 'contract_interface') &&
      member !== null
    ) {
      add(shapes, group, memberPath, 'abi');
      walk(shapes, 'abi', '', member);
    } else if (path === '' && (key === 'transactions' || key === 'events') && Array.isArray(member)) {
      // each transaction and event is walked in its own group (by payload kind, by event type)
      add(shapes, group, memberPath, 'array');
    } else {
      walk(shapes, group, memberPath, member);
    }
  }
}

/** The payload kind of a block transaction: its decoded type, or `burnchain_op` (raw_tx `0x00`). */
function txKind(tx: { raw_tx: string }): string {
  return tx.raw_tx === '0x00' ? 'burnchain_op' : decodeTransaction(tx.raw_tx).txType;
}

function messageShapes(messages: Iterable<Pick<RecordedMessage, 'path' | 'payload'>>): Shapes {
  const shapes: Shapes = new Map();
  for (const message of messages) {
    const body = JSON.parse(message.payload) as Record<string, unknown>;
    walk(shapes, message.path, '', body);
    if (message.path !== '/new_block' && message.path !== '/new_microblocks') continue;
    for (const tx of body.transactions as { raw_tx: string }[]) walk(shapes, `tx:${txKind(tx)}`, '', tx);
    for (const event of body.events as { type: string }[]) walk(shapes, `event:${event.type}`, '', event);
  }
  return shapes;
}

function sourceShapes(encoded: Record<string, Record<string, string>>): Shapes {
  const shapes: Shapes = new Map();
  for (const [group, paths] of Object.entries(encoded)) {
    for (const [path, types] of Object.entries(paths))
      for (const type of types.split('|')) add(shapes, group, path, type);
  }
  return shapes;
}

/** What the nodes of an era post, per group: every key path with its types, and those all of them post. */
interface Reference {
  types: Map<string, Set<string>>;
  required: Set<string>;
}

function references(sources: { shapes: Shapes; complete: boolean }[]): Map<string, Reference> {
  const out = new Map<string, Reference>();
  for (const { shapes, complete } of sources) {
    for (const [group, paths] of shapes) {
      const ref = out.get(group);
      if (!ref) {
        out.set(group, {
          types: new Map([...paths].map(([path, types]) => [path, new Set(types)])),
          required: new Set(complete ? paths.keys() : []),
        });
        continue;
      }
      for (const [path, types] of paths) {
        const known = ref.types.get(path) ?? new Set();
        for (const type of types) known.add(type);
        ref.types.set(path, known);
      }
      if (complete) for (const path of ref.required) if (!paths.has(path)) ref.required.delete(path);
    }
  }
  return out;
}

function differences(era: Era, generated: Shapes, refs: Map<string, Reference>): string[] {
  const found: string[] = [];
  for (const [group, paths] of generated) {
    const ref = refs.get(group);
    if (!ref) {
      found.push(`${era} ${group} (no node message of this kind to compare with)`);
      continue;
    }
    for (const [path, types] of paths) {
      const known = ref.types.get(path);
      if (!known) found.push(`${era} ${group} ${path} extra`);
      else for (const type of types) if (!known.has(type)) found.push(`${era} ${group} ${path} type:${type}`);
    }
    for (const path of ref.required) if (!paths.has(path)) found.push(`${era} ${group} ${path} missing`);
  }
  return found.sort();
}

// --- tests -----------------------------------------------------------------------------------------------

const generated = new Map<Era, Shapes>();

before(async () => {
  for (const era of ['2.x', 'nakamoto'] as const) {
    const messages: RecordedMessage[] = [];
    await generateChain(GENERATED[era], (message) => {
      messages.push(message);
    });
    generated.set(era, messageShapes(messages));
  }
});

describe('payload shapes: generated chains against recorded node messages', () => {
  test('every recorded chain is assigned to an era', () => {
    assert.deepEqual([...RECORDINGS['2.x'], ...RECORDINGS.nakamoto].sort(), fixtureNames());
  });

  test('ABI types read as Clarity type expressions', () => {
    assert.equal(
      abiTypeExpression({
        response: { ok: { optional: { 'string-ascii': { length: 12 } } }, error: 'uint128' },
      }),
      '(response (optional (string-ascii 12)) uint)',
    );
    assert.equal(
      abiTypeExpression({
        list: { type: { tuple: [{ name: 'a', type: { buffer: { length: 32 } } }] }, length: 5 },
      }),
      '(list 5 (tuple (a (buff 32))))',
    );
    assert.throws(() => abiTypeExpression({ buffer: 32 }), /not an ABI buffer type/);
    assert.throws(() => abiTypeExpression('uint'), /not an ABI type: "uint"/);
  });

  for (const era of ['2.x', 'nakamoto'] as const) {
    test(`${era}: the generated chain posts what a node of its era posts`, () => {
      const shapes = generated.get(era)!;
      const recorded = RECORDINGS[era].map((name) => ({
        shapes: messageShapes(fixtureMessages(name)),
        complete: true,
      }));
      const refs = references([...recorded, ...sourceSources(era, shapes.keys())]);
      const found = differences(era, shapes, refs);
      const legitimate = Object.keys(LEGITIMATE).filter((key) => key.startsWith(`${era} `));
      assert.deepEqual(
        found.filter((d) => !Object.hasOwn(LEGITIMATE, d)),
        [],
        'differences from the nodes not listed as legitimate',
      );
      assert.deepEqual(
        legitimate.filter((d) => !found.includes(d)),
        [],
        'listed as legitimate but no longer found',
      );
    });
  }
});
