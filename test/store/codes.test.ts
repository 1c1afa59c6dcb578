import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  AnchorMode as LibAnchorMode,
  PayloadType,
  PostConditionMode as LibPostConditionMode,
} from '@stacks/transactions';
import {
  AnchorMode,
  DEPLOY_TYPE_IDS,
  MempoolStatus,
  PostConditionMode,
  TxStatus,
  TxTypeId,
  anchorModeName,
  eventTypeName,
  EventKind,
  mempoolStatusName,
  postConditionModeName,
  txStatusName,
  txTypeName,
} from '../../src/store/schema/codes.js';

// The store's code tables against the ecosystem's library, and both directions of each.

describe('code tables', () => {
  test('tx type ids are the wire payload types of @stacks/transactions', () => {
    assert.deepEqual(TxTypeId, {
      token_transfer: PayloadType.TokenTransfer,
      smart_contract: PayloadType.SmartContract,
      contract_call: PayloadType.ContractCall,
      poison_microblock: PayloadType.PoisonMicroblock,
      coinbase: PayloadType.Coinbase,
      coinbase_to_alt_recipient: PayloadType.CoinbaseToAltRecipient,
      versioned_smart_contract: PayloadType.VersionedSmartContract,
      tenure_change: PayloadType.TenureChange,
      nakamoto_coinbase: PayloadType.NakamotoCoinbase,
    });
    assert.deepEqual(DEPLOY_TYPE_IDS, [PayloadType.SmartContract, PayloadType.VersionedSmartContract]);
  });

  test('anchor and post-condition modes are those of @stacks/transactions', () => {
    assert.deepEqual(AnchorMode, {
      on_chain_only: LibAnchorMode.OnChainOnly,
      off_chain_only: LibAnchorMode.OffChainOnly,
      any: LibAnchorMode.Any,
    });
    assert.deepEqual(PostConditionMode, {
      allow: LibPostConditionMode.Allow,
      deny: LibPostConditionMode.Deny,
      originator: LibPostConditionMode.Originator,
    });
  });

  test('codes map back to the names the API shows', () => {
    assert.deepEqual(Object.values(TxTypeId).map(txTypeName), [
      'token_transfer',
      'smart_contract',
      'contract_call',
      'poison_microblock',
      'coinbase',
      'coinbase',
      'smart_contract',
      'tenure_change',
      'coinbase',
    ]);
    assert.equal(txTypeName(99), 'unknown');
    for (const [name, code] of Object.entries(TxStatus)) assert.equal(txStatusName(code), name);
    assert.equal(
      mempoolStatusName(MempoolStatus.dropped_api_garbage_collect),
      'dropped_stale_garbage_collect',
    );
    assert.equal(mempoolStatusName(MempoolStatus.dropped_replace_by_fee), 'dropped_replace_by_fee');
    assert.equal(mempoolStatusName(42), 'pending');
    assert.equal(anchorModeName(AnchorMode.any), 'any');
    assert.equal(postConditionModeName(PostConditionMode.originator), 'originator');
    assert.deepEqual(Object.values(EventKind).map(eventTypeName), [
      'stx_asset',
      'fungible_token_asset',
      'non_fungible_token_asset',
      'stx_lock',
      'smart_contract_log',
    ]);
  });
});
