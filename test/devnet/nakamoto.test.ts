import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { before, describe, test } from 'node:test';
import * as secp from '@noble/secp256k1';
import {
  PayloadType,
  TenureChangeCause,
  deserializeTransaction,
  type NakamotoCoinbasePayloadWire,
  type TenureChangePayloadWire,
} from '@stacks/transactions';
import { c32address } from 'c32check';
import { generateChain, type GenerateReport } from '../../src/devnet/chain.js';
import { vrfProve, vrfPublicKey, vrfVerify } from '../../src/devnet/vrf.js';
import { readTsv, type RecordedMessage } from '../../src/protocol/tsv.js';
import type { NewBlockMessage } from '../support/node-messages.js';
import { fixtureFile } from '../support/shared.js';

// The Nakamoto era of the generator, checked without the indexer: against the VRF's published test
// vectors, the messages of a recorded 3.x node, and the chain's own invariants (each checked with
// @stacks/transactions and @noble/secp256k1, not with the generator's code).

const CHAIN = {
  blocks: 40,
  accounts: 16,
  seed: 'nakamoto-test',
  txsPerBlock: 6,
  workers: 0,
  nakamotoHeight: 15,
};
let report: GenerateReport;
const messages: RecordedMessage[] = [];
const blocks: NewBlockMessage[] = [];

before(async () => {
  report = await generateChain(CHAIN, (m) => {
    messages.push(m);
  });
  for (const m of messages)
    if (m.path === '/new_block') blocks.push(JSON.parse(m.payload) as NewBlockMessage);
});

const sha512_256 = (...parts: Buffer[]) => {
  const hash = createHash('sha512-256');
  for (const p of parts) hash.update(p);
  return hash.digest();
};
const bytes = (hex: string) => Buffer.from(hex.replace(/^0x/, ''), 'hex');

describe('ECVRF-ED25519-SHA512-TAI', () => {
  // draft-irtf-cfrg-vrf-04, appendix A.3 (the vectors stacks-core's own tests use)
  const vectors = [
    {
      secretKey: '9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60',
      alpha: '',
      proof:
        '9275df67a68c8745c0ff97b48201ee6db447f7c93b23ae24cdc2400f52fdb08a1a6ac7ec71bf9c9c76e96ee4675ebff6' +
        '0625af28718501047bfd87b810c2d2139b73c23bd69de66360953a642c2a330a',
    },
    {
      secretKey: '4ccd089b28ff96da9db6c346ec114e0f5b8a319f35aba624da8cf6ed4fb8a6fb',
      alpha: '72',
      proof:
        '84a63e74eca8fdd64e9972dcda1c6f33d03ce3cd4d333fd6cc789db12b5a7b9d03f1cb6b2bf7cd81a2a20bacf6e1c04e' +
        '59f2fa16d9119c73a45a97194b504fb9a5c8cf37f6da85e03368d6882e511008',
    },
    {
      secretKey: 'c5aa8df43f9f837bedb7442f31dcb7b166d38535076f094b85ce3a2e0b4458f7',
      alpha: 'af82',
      proof:
        'aca8ade9b7f03e2b149637629f95654c94fc9053c225ec21e5838f193af2b727b84ad849b0039ad38b41513fe5a66cdd' +
        '2367737a84b488d62486bd2fb110b4801a46bfca770af98e059158ac563b690f',
    },
  ];

  test('proves the draft test vectors, and verifies them', () => {
    for (const v of vectors) {
      const proof = vrfProve(bytes(v.secretKey), bytes(v.alpha));
      assert.equal(proof.toString('hex'), v.proof);
      const publicKey = vrfPublicKey(bytes(v.secretKey));
      assert.equal(vrfVerify(publicKey, proof, bytes(v.alpha)), true);
      assert.equal(vrfVerify(publicKey, proof, Buffer.from('other message')), false);
      const tampered = Buffer.from(proof);
      tampered[40] ^= 1;
      assert.equal(vrfVerify(publicKey, tampered, bytes(v.alpha)), false);
    }
  });
});

/** The JSON type of each member, recursively for objects (arrays: the type of their first element). */
function shape(value: unknown): unknown {
  if (value === null) return 'null';
  if (Array.isArray(value)) return value.length > 0 ? [shape(value[0])] : [];
  if (typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, shape(v)]));
  }
  return typeof value;
}

async function recordedNakamotoMessages() {
  const recorded: { block?: NewBlockMessage; epoch2Block?: NewBlockMessage; burnBlock?: object } = {};
  for await (const m of readTsv(fixtureFile('fuzzed-transactions-1'))) {
    const payload = JSON.parse(m.payload) as NewBlockMessage;
    if (m.path === '/new_burn_block') recorded.burnBlock ??= payload;
    if (m.path !== '/new_block') continue;
    if (payload.signer_bitvec === null) recorded.epoch2Block ??= payload;
    else if (payload.events.length > 0) recorded.block ??= payload;
  }
  return recorded;
}

describe('a generated Nakamoto chain', () => {
  test('posts messages shaped as a recorded 3.x node posts them (keys, key order, value types)', async () => {
    const recorded = await recordedNakamotoMessages();
    const keys = (o: object) => Object.keys(o);
    /** The top-level members' types (list members whose items are checked on their own, or absent, left out). */
    const topLevel = (b: NewBlockMessage) => {
      const { transactions: _t, events: _e, matured_miner_rewards: _m, reward_set: _r, ...rest } = b;
      return shape(rest);
    };
    const recordedEvent = recorded.block!.events[0] as Record<string, unknown>;
    const recordedEventMembers = keys(recordedEvent).filter((k) => k !== recordedEvent.type);
    let nakamotoBlocks = 0;
    for (const block of blocks) {
      const like = block.signer_bitvec === null ? recorded.epoch2Block! : recorded.block!;
      if (block.signer_bitvec !== null) nakamotoBlocks++;
      assert.deepEqual(keys(block), keys(like), `members of block ${block.block_height}`);
      assert.deepEqual(topLevel(block), topLevel(like), `member types of block ${block.block_height}`);
      const { contract_interface: _none, ...recordedTx } = recorded.block!.transactions[0] as Record<
        string,
        unknown
      >;
      for (const { contract_interface: abi, ...tx } of block.transactions as Record<string, unknown>[]) {
        assert.deepEqual(keys(tx), keys(recordedTx));
        assert.ok(abi === null || typeof abi === 'object');
        // (a confirmed microblock tx of epoch 2.x names its microblock)
        if (tx.microblock_hash === null) assert.deepEqual(shape(tx), shape(recordedTx));
      }
      for (const event of block.events as Record<string, unknown>[]) {
        const { [event.type as string]: body, ...rest } = event;
        assert.ok(body && typeof body === 'object');
        assert.deepEqual(keys(rest), recordedEventMembers);
        assert.deepEqual(keys(body), [...keys(body)].sort(), 'event bodies list their keys in order');
      }
    }
    assert.equal(nakamotoBlocks, CHAIN.blocks - CHAIN.nakamotoHeight + 1);
    for (const m of messages.filter((m) => m.path === '/new_burn_block')) {
      const burnBlock = JSON.parse(m.payload) as { reward_recipients: unknown[] };
      assert.deepEqual(keys(burnBlock), keys(recorded.burnBlock!));
      if (burnBlock.reward_recipients.length > 0)
        assert.deepEqual(shape(burnBlock), shape(recorded.burnBlock));
    }
  });

  test('enters Nakamoto at the given height, with the tenure heights and counts of its report', () => {
    assert.equal(report.tipHeight, CHAIN.blocks);
    assert.equal(report.nakamotoHeight, CHAIN.nakamotoHeight);
    const tip = blocks.filter((b) => b.block_height === CHAIN.blocks);
    assert.equal(tip.length, 1);
    assert.equal(tip[0].index_block_hash, report.tipIndexBlockHash);
    assert.equal(tip[0].tenure_height, report.tipTenureHeight);
    let tenures = 0;
    let extends_ = 0;
    const txTypes: Record<string, number> = {};
    const canonical = blocks.filter((b) => b.block_height >= CHAIN.nakamotoHeight);
    for (const block of blocks) {
      if (block.block_height < CHAIN.nakamotoHeight) {
        assert.equal(block.tenure_height, block.block_height);
        assert.equal(block.block_time, null);
        assert.equal(block.signer_bitvec, null);
        continue;
      }
      assert.equal(typeof block.block_time, 'number');
      assert.ok(block.transactions.every((t) => t.microblock_hash === null));
      for (const t of block.transactions) {
        const type = deserializeTransaction(t.raw_tx.slice(2)).payload.payloadType;
        txTypes[type] = (txTypes[type] ?? 0) + 1;
        if (type !== PayloadType.TenureChange) continue;
        const payload = deserializeTransaction(t.raw_tx.slice(2)).payload as TenureChangePayloadWire;
        if (payload.cause === TenureChangeCause.BlockFound) tenures++;
        else extends_++;
      }
    }
    assert.equal(tenures, report.tenures);
    assert.equal(extends_, report.tenureExtends);
    assert.ok(report.tenures >= 3 && report.tenureExtends >= 1, 'several tenures, and an extended one');
    assert.equal(txTypes[PayloadType.NakamotoCoinbase], report.tenures);
    assert.equal(txTypes[PayloadType.TenureChange], report.tenures + report.tenureExtends);
    assert.equal(txTypes[PayloadType.Coinbase] ?? 0, 0, 'no epoch 2 coinbase after the transition');
    assert.equal(report.tipTenureHeight, CHAIN.nakamotoHeight - 1 + report.tenures);
    assert.equal(report.txTypes.tenure_change, report.tenures + report.tenureExtends);
    assert.equal(canonical.length, CHAIN.blocks - CHAIN.nakamotoHeight + 1);
    const firstNakamoto = messages.findIndex(
      (m) => m.path === '/new_block' && (JSON.parse(m.payload) as NewBlockMessage).signer_bitvec !== null,
    );
    assert.ok(messages.slice(0, firstNakamoto).some((m) => m.path === '/new_microblocks'));
    assert.ok(!messages.slice(firstNakamoto).some((m) => m.path === '/new_microblocks'), 'no microblocks');
  });

  test('tenures: tenure changes name the blocks and tenures before them; coinbases prove the election', () => {
    const byIndexHash = new Map(blocks.map((b) => [b.index_block_hash, b]));
    const vrfKeys = new Map(report.miners.map((m) => [m.address, bytes(m.vrfPublicKey)]));
    const burnHeightsWithBlocks = new Set(blocks.map((b) => b.burn_block_height));
    let sinceFound = 0;
    for (const block of blocks.filter((b) => b.block_height >= CHAIN.nakamotoHeight)) {
      const parent = byIndexHash.get(block.parent_index_block_hash)!;
      assert.equal(parent.block_height, block.block_height - 1);
      assert.ok(block.block_time! > (parent.block_time ?? parent.burn_block_time));
      const [first, second] = block.transactions.map((t) => deserializeTransaction(t.raw_tx.slice(2)));
      if (first.payload.payloadType !== PayloadType.TenureChange) {
        // a block inside a tenure: same tenure as its parent
        assert.equal(block.consensus_hash, parent.consensus_hash);
        assert.equal(block.tenure_height, parent.tenure_height);
        assert.equal(block.miner_txid, parent.miner_txid);
        assert.equal(block.burn_block_height, parent.burn_block_height);
        sinceFound++;
        continue;
      }
      const change = first.payload as TenureChangePayloadWire;
      assert.equal(change.previousTenureEnd, block.parent_index_block_hash.slice(2));
      assert.equal(change.publicKeyHash, first.auth.spendingCondition.signer);
      assert.equal(change.tenureHash, block.consensus_hash.slice(2));
      if (change.cause === TenureChangeCause.BlockFound) {
        assert.equal(block.tenure_height, parent.tenure_height + 1);
        assert.equal(change.previousTenureHash, parent.consensus_hash.slice(2));
        assert.equal(change.burnViewHash, block.consensus_hash.slice(2));
        assert.equal(change.previousTenureBlocks, parent.signer_bitvec === null ? 1 : sinceFound);
        assert.notEqual(block.consensus_hash, parent.consensus_hash);
        const coinbase = second.payload as NakamotoCoinbasePayloadWire;
        assert.equal(coinbase.payloadType, PayloadType.NakamotoCoinbase);
        assert.equal(second.auth.spendingCondition.signer, change.publicKeyHash);
        const miner = c32address(22, change.publicKeyHash);
        assert.ok(
          vrfVerify(vrfKeys.get(miner)!, Buffer.from(coinbase.vrfProof), bytes(block.burn_block_hash)),
          `the VRF proof of block ${block.block_height} verifies`,
        );
        sinceFound = 1;
      } else {
        // extended after a burn block without a sortition winner: same tenure, a newer burn view
        assert.equal(block.tenure_height, parent.tenure_height);
        assert.equal(block.consensus_hash, parent.consensus_hash);
        assert.equal(change.previousTenureHash, parent.consensus_hash.slice(2));
        assert.notEqual(change.burnViewHash, block.consensus_hash.slice(2));
        assert.equal(change.previousTenureBlocks, sinceFound);
        const burnView = messages
          .filter((m) => m.path === '/new_burn_block')
          .map((m) => JSON.parse(m.payload) as { consensus_hash: string; burn_block_height: number })
          .find((b) => b.consensus_hash.slice(2) === change.burnViewHash)!;
        assert.ok(!burnHeightsWithBlocks.has(burnView.burn_block_height), 'no block at the empty sortition');
        sinceFound++;
      }
    }
  });

  test('is deterministic: same seed, same messages, whatever the number of signer threads', async () => {
    const again: RecordedMessage[] = [];
    await generateChain({ ...CHAIN, workers: 2 }, (m) => {
      again.push(m);
    });
    assert.deepEqual(again, messages);
  });

  test('block hashes are the signer signature hash; the signer set signs each block', () => {
    const signerKeys = new Set<string>();
    for (const block of blocks.filter((b) => b.block_height >= CHAIN.nakamotoHeight)) {
      assert.equal(block.signer_signature_hash, block.block_hash);
      assert.equal(
        block.index_block_hash.slice(2),
        sha512_256(bytes(block.block_hash), bytes(block.consensus_hash)).toString('hex'),
      );
      assert.match(block.miner_signature!, /^0x[0-9a-f]{130}$/);
      const keys = block.signer_signature!.map((sig) => {
        const raw = bytes(sig);
        const key = secp.recoverPublicKey(bytes(block.block_hash), raw.subarray(1), raw[0], true);
        assert.ok(secp.verify(raw.subarray(1), bytes(block.block_hash), key));
        return Buffer.from(key).toString('hex');
      });
      assert.ok(keys.length >= 2);
      assert.deepEqual([...keys].sort(), keys, 'in signer-set order');
      for (const k of keys) signerKeys.add(k);
      assert.match(block.signer_bitvec!, /^000a00000002ff03$/);
    }
    assert.equal(signerKeys.size, 4, 'one signer set');
  });
});
