import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  type AddressHashMode,
  addressFromVersionHash,
  addressHashModeToVersion,
  addressToString,
  Cl,
  createSingleSigSpendingCondition,
  createStandardAuth,
  createCoinbasePayload,
  createNakamotoCoinbasePayload,
  createTenureChangePayload,
  cvToHex,
  deserializeTransaction,
  getAddressFromPrivateKey,
  makeUnsignedContractCall,
  makeUnsignedContractDeploy,
  makeSTXTokenTransfer,
  Pc,
  PostConditionMode,
  privateKeyToPublic,
  sponsorTransaction,
  StacksTransactionWire,
  TenureChangeCause,
  type ClarityValue,
} from '@stacks/transactions';
import { applyAbiToContractCall, clarityHexToRepr, type ContractCallJson } from '../../src/chain/clarity.js';
import { decodeTransaction, txIdFromRaw, type DecodedTx } from '../../src/chain/transaction.js';
import { fixtureNames, loadGolden } from '../support/shared.js';
import { indexFixture } from './fixture-index.js';

type Json = Record<string, unknown>;

const PAYLOAD_KEYS = [
  'token_transfer',
  'smart_contract',
  'contract_call',
  'poison_microblock',
  'coinbase_payload',
  'tenure_change_payload',
] as const;

/** Tx objects of every 200 body of `/extended/v1/tx/0x…` in a golden file. */
function goldenTxBodies(name: string): Json[] {
  return loadGolden(name)
    .filter((g) => g.status === 200 && /^\/extended\/v1\/tx\/0x[0-9a-fA-F]{64}(\?.*)?$/.test(g.path))
    .map((g) => g.body as Json);
}

/** Asserts `actual` equals `expected` including key order (the API serializes in this order). */
function assertSameJson(actual: unknown, expected: unknown, message: string): void {
  assert.deepStrictEqual(actual, expected, message);
  assert.equal(JSON.stringify(actual), JSON.stringify(expected), `${message} (key order)`);
}

function compareWithGolden(d: DecodedTx, body: Json, abi: unknown, where: string): void {
  assert.equal(d.txType, body.tx_type, `${where} tx_type`);
  assert.equal(d.nonce, body.nonce, `${where} nonce`);
  assert.equal(d.feeRate, body.fee_rate, `${where} fee_rate`);
  assert.equal(d.senderAddress, body.sender_address, `${where} sender_address`);
  assert.equal(d.sponsored, body.sponsored, `${where} sponsored`);
  if (d.sponsored) {
    assert.equal(d.sponsorAddress, body.sponsor_address, `${where} sponsor_address`);
    assert.equal(d.sponsorNonce, body.sponsor_nonce, `${where} sponsor_nonce`);
  } else {
    assert.equal('sponsor_address' in body, false, `${where} no sponsor_address`);
    assert.equal('sponsor_nonce' in body, false, `${where} no sponsor_nonce`);
  }
  assert.equal(d.postConditionMode, body.post_condition_mode, `${where} post_condition_mode`);
  assertSameJson(d.postConditions, body.post_conditions, `${where} post_conditions`);
  assert.equal(d.anchorMode, body.anchor_mode, `${where} anchor_mode`);

  const keys = Object.keys(d.payload);
  assert.equal(keys.length, 1);
  const key = keys[0];
  assert.ok((PAYLOAD_KEYS as readonly string[]).includes(key), `${where} payload key ${key}`);
  let payload = d.payload[key];
  if (key === 'contract_call') {
    const call = payload as ContractCallJson;
    const golden = body.contract_call as ContractCallJson;
    assert.equal(call.contract_id, golden.contract_id, `${where} contract_id`);
    assert.equal(call.function_name, golden.function_name, `${where} function_name`);
    assert.deepEqual(
      call.function_args?.map((a) => [a.hex, a.repr]),
      golden.function_args?.map((a) => [a.hex, a.repr]),
      `${where} function_args hex/repr`,
    );
    payload = abi ? applyAbiToContractCall(call, abi) : call;
  }
  assertSameJson(payload, body[key], `${where} ${key}`);
  for (const other of PAYLOAD_KEYS) {
    if (other !== key) assert.equal(other in body, false, `${where} has no ${other}`);
  }
}

let goldenTotal = 0;

describe('decodeTransaction against the golden API responses', () => {
  for (const name of fixtureNames()) {
    test(name, (t) => {
      const idx = indexFixture(name);
      const bodies = goldenTxBodies(name);
      let compared = 0;
      let withAbi = 0;
      let results = 0;
      let eventValues = 0;
      for (const body of bodies) {
        const txId = body.tx_id as string;
        const raw = idx.rawTx.get(txId);
        assert.ok(raw, `${name}: raw tx of ${txId} is in the fixture`);
        if (raw === '0x00') continue; // a burnchain-op tx: see burnchain-op.test.ts
        assert.equal(txIdFromRaw(raw), txId, `${txId}: tx id is the hash of its bytes`);
        const decoded = decodeTransaction(raw);
        assert.equal(decoded.byteLength, (raw.length - 2) / 2);
        const contractId = decoded.contractCallContractId;
        const abi = contractId ? idx.abis.get(contractId) : undefined;
        if (abi) withAbi++;
        compareWithGolden(decoded, body, abi, `${name} ${txId}`);
        compared++;

        const txResult = body.tx_result as { hex: string; repr: string } | undefined;
        if (txResult) {
          assert.equal(txResult.hex, idx.rawResult.get(txId), `${txId} tx_result.hex`);
          assert.equal(clarityHexToRepr(txResult.hex), txResult.repr, `${txId} tx_result.repr`);
          results++;
        }
        for (const ev of (body.events as Json[] | undefined) ?? []) {
          const value =
            (ev.contract_log as { value?: { hex: string; repr: string } } | undefined)?.value ??
            (ev.asset as { value?: { hex: string; repr: string } } | undefined)?.value;
          if (value) {
            assert.equal(clarityHexToRepr(value.hex), value.repr, `${txId} event ${String(ev.event_index)}`);
            eventValues++;
          }
        }
      }
      assert.ok(compared > 0, `${name}: some golden txs were compared`);
      const summary = `${name}: ${compared} golden txs compared (${withAbi} contract calls with ABI), ${results} tx_result reprs, ${eventValues} event value reprs`;
      t.diagnostic(summary);
      goldenTotal += compared;
    });
  }
  test('summary', (t) => {
    assert.ok(goldenTotal >= 300, `at least 300 golden txs compared (got ${goldenTotal})`);
    const line = `golden /extended/v1/tx bodies compared in total: ${goldenTotal}`;
    t.diagnostic(line);
    console.log(line);
  });
});

function senderFromLibrary(hashMode: AddressHashMode, signer: string, testnet: boolean): string {
  const version = addressHashModeToVersion(hashMode, testnet ? 'testnet' : 'mainnet');
  return addressToString(addressFromVersionHash(version, signer));
}

describe('decodeTransaction agrees with @stacks/transactions on every fixture tx', () => {
  test('all raw txs of all fixtures', (t) => {
    let count = 0;
    for (const name of fixtureNames()) {
      for (const raw of new Set(indexFixture(name).rawTx.values())) {
        if (raw === '0x00') continue;
        const d = decodeTransaction(raw);
        const lib = deserializeTransaction(raw.slice(2));
        const testnet = lib.transactionVersion !== 0;
        assert.equal(d.chainId, lib.chainId);
        const origin = lib.auth.spendingCondition;
        assert.equal(d.senderAddress, senderFromLibrary(origin.hashMode, origin.signer, testnet));
        assert.equal(d.nonce, Number(origin.nonce));
        const sponsor = lib.auth.authType === 0x05 ? lib.auth.sponsorSpendingCondition : null;
        assert.equal(d.sponsored, sponsor !== null);
        assert.equal(d.feeRate, (sponsor ?? origin).fee.toString());
        assert.equal(d.postConditions.length, lib.postConditions.values.length);
        assert.equal(
          d.anchorMode,
          ({ 1: 'on_chain_only', 2: 'off_chain_only', 3: 'any' } as const)[lib.anchorMode],
        );
        const p = lib.payload as unknown as Json;
        assert.equal(d.typeId, p.payloadType);
        if (d.txType === 'token_transfer') {
          assert.equal(d.tokenTransferAmount, String(p.amount));
          const recipient = p.recipient as ClarityValue & { value: string };
          assert.equal(d.tokenTransferRecipient, recipient.value);
        } else if (d.txType === 'contract_call') {
          const address = addressToString(p.contractAddress as Parameters<typeof addressToString>[0]);
          assert.equal(
            d.contractCallContractId,
            `${address}.${(p.contractName as { content: string }).content}`,
          );
          assert.equal(d.contractCallFunctionName, (p.functionName as { content: string }).content);
          const args = (d.payload.contract_call as ContractCallJson).function_args ?? [];
          assert.deepEqual(
            args.map((a) => a.hex),
            (p.functionArgs as ClarityValue[]).map((cv) => cvToHex(cv)),
          );
        } else if (d.txType === 'smart_contract') {
          const sc = d.payload.smart_contract as { source_code: string };
          assert.equal(sc.source_code, (p.codeBody as { content: string }).content);
        }
        count++;
      }
    }
    assert.ok(count > 300);
    t.diagnostic(`${count} distinct fixture txs cross-checked with @stacks/transactions`);
  });
});

// Keys generated once for these tests (not secrets: they only sign throwaway test txs).
const KEY_A = 'edf9aee84d9b7abc145504dde6726c64f369d37ee34ded868fabd876c26570bc01';
const KEY_B = '753b7cc01a1a2e86221266a154af739463fce51219d97e4f856cd7200c3bd2a601';

describe('decodeTransaction on constructed transactions', () => {
  test('sponsored token transfer: fee from the sponsor, nonce from the origin', async () => {
    const unsigned = await makeSTXTokenTransfer({
      recipient: 'ST2ZRX0K27GW0SP3GJCEMHD95TQGJMKB7G9Y0X1MH.my-contract',
      amount: 12345n,
      memo: 'hello',
      senderKey: KEY_A,
      fee: 0n,
      nonce: 7n,
      network: 'testnet',
      sponsored: true,
    });
    const sponsored = await sponsorTransaction({
      transaction: unsigned,
      sponsorPrivateKey: KEY_B,
      fee: 500n,
      sponsorNonce: 3n,
      network: 'testnet',
    });
    const d = decodeTransaction(sponsored.serialize());
    assert.equal(d.txType, 'token_transfer');
    assert.equal(d.typeId, 0);
    assert.equal(d.version, 0x80);
    assert.equal(d.chainId, 0x80000000);
    assert.equal(d.senderAddress, getAddressFromPrivateKey(KEY_A, 'testnet'));
    assert.equal(d.nonce, 7);
    assert.equal(d.sponsored, true);
    assert.equal(d.sponsorAddress, getAddressFromPrivateKey(KEY_B, 'testnet'));
    assert.equal(d.sponsorNonce, 3);
    assert.equal(d.feeRate, '500');
    assert.deepEqual(d.payload, {
      token_transfer: {
        recipient_address: 'ST2ZRX0K27GW0SP3GJCEMHD95TQGJMKB7G9Y0X1MH.my-contract',
        amount: '12345',
        memo: '0x' + Buffer.from('hello').toString('hex') + '00'.repeat(29),
      },
    });
    assert.equal(d.tokenTransferRecipient, 'ST2ZRX0K27GW0SP3GJCEMHD95TQGJMKB7G9Y0X1MH.my-contract');
    assert.equal(d.tokenTransferAmount, '12345');
  });

  test('contract call with every post-condition kind', async () => {
    const sender = getAddressFromPrivateKey(KEY_A, 'mainnet');
    const tx = await makeUnsignedContractCall({
      contractAddress: 'SP000000000000000000002Q6VF78',
      contractName: 'pox-4',
      functionName: 'stack-stx',
      functionArgs: [Cl.uint(1000000n), Cl.int(-7), Cl.stringUtf8('ü'), Cl.none()],
      publicKey: privateKeyToPublic(KEY_A) as string,
      fee: 3000n,
      nonce: 12n,
      network: 'mainnet',
      postConditionMode: PostConditionMode.Deny,
      postConditions: [
        Pc.origin().willSendLte(100n).ustx(),
        Pc.principal('SP3D6PV2ACBPEKYJTCMH7HEN02KP87QSP8KTEH335').willSendGt(5n).ustx(),
        Pc.principal('SP3D6PV2ACBPEKYJTCMH7HEN02KP87QSP8KTEH335.vault')
          .willSendEq(9n)
          .ft('SP3K8BC0PPEVCV7NZ6QSRWPQ2JE9E5B6N3PA0KBR9.token-apower', 'apower'),
        Pc.origin()
          .willNotSendAsset()
          .nft('SPJW1XE278YMCEYMXB8ZFGJMH8ZVAAEDP2S2PJYG.phases-of-satoshi::phases-of-satoshi', Cl.uint(143)),
        Pc.principal(sender).willSendLt(1n).ustx(),
        Pc.principal(sender).willSendGte(2n).ustx(),
      ],
    });
    const d = decodeTransaction(tx.serialize());
    assert.equal(d.senderAddress, sender);
    assert.equal(d.nonce, 12);
    assert.equal(d.feeRate, '3000');
    assert.equal(d.sponsored, false);
    assert.equal(d.sponsorAddress, null);
    assert.equal(d.anchorMode, 'any');
    assert.equal(d.postConditionMode, 'deny');
    assertSameJson(
      d.postConditions,
      [
        {
          principal: { type_id: 'principal_origin' },
          condition_code: 'sent_less_than_or_equal_to',
          amount: '100',
          type: 'stx',
        },
        {
          principal: { type_id: 'principal_standard', address: 'SP3D6PV2ACBPEKYJTCMH7HEN02KP87QSP8KTEH335' },
          condition_code: 'sent_greater_than',
          amount: '5',
          type: 'stx',
        },
        {
          principal: {
            type_id: 'principal_contract',
            address: 'SP3D6PV2ACBPEKYJTCMH7HEN02KP87QSP8KTEH335',
            contract_name: 'vault',
          },
          condition_code: 'sent_equal_to',
          amount: '9',
          type: 'fungible',
          asset: {
            asset_name: 'apower',
            contract_address: 'SP3K8BC0PPEVCV7NZ6QSRWPQ2JE9E5B6N3PA0KBR9',
            contract_name: 'token-apower',
          },
        },
        {
          principal: { type_id: 'principal_origin' },
          condition_code: 'not_sent',
          type: 'non_fungible',
          asset_value: { hex: '0x010000000000000000000000000000008f', repr: 'u143' },
          asset: {
            asset_name: 'phases-of-satoshi',
            contract_address: 'SPJW1XE278YMCEYMXB8ZFGJMH8ZVAAEDP2S2PJYG',
            contract_name: 'phases-of-satoshi',
          },
        },
        {
          principal: { type_id: 'principal_standard', address: sender },
          condition_code: 'sent_less_than',
          amount: '1',
          type: 'stx',
        },
        {
          principal: { type_id: 'principal_standard', address: sender },
          condition_code: 'sent_greater_than_or_equal_to',
          amount: '2',
          type: 'stx',
        },
      ],
      'post conditions',
    );
    assertSameJson(
      d.payload,
      {
        contract_call: {
          contract_id: 'SP000000000000000000002Q6VF78.pox-4',
          function_name: 'stack-stx',
          function_signature: '',
          function_args: [
            { hex: '0x01000000000000000000000000000f4240', repr: 'u1000000', name: '', type: 'uint' },
            { hex: '0x00fffffffffffffffffffffffffffffff9', repr: '-7', name: '', type: 'int' },
            { hex: '0x0e00000002c3bc', repr: 'u"\\u{c3bc}"', name: '', type: '(string-utf8 4)' },
            { hex: '0x09', repr: 'none', name: '', type: '(optional UnknownType)' },
          ],
        },
      },
      'contract call payload',
    );
    assert.equal(d.contractCallContractId, 'SP000000000000000000002Q6VF78.pox-4');
    assert.equal(d.contractCallFunctionName, 'stack-stx');
    assert.equal(
      d.contractCallFunctionArgsHex,
      '0x00000004' +
        '01000000000000000000000000000f4240' +
        '00fffffffffffffffffffffffffffffff9' +
        '0e00000002c3bc' +
        '09',
    );
  });

  test('maybe_sent NFT condition and originator post-condition mode', () => {
    // Built by hand: this library version has no builder for them.
    const tx = deserializeTransaction(
      (
        singleSigTxPrefix() +
        '03' + // anchor mode any
        '03' + // post-condition mode originator
        '00000001' +
        '02' + // non-fungible
        '01' + // origin principal
        '16' +
        'a46ff88886c2ef9762d970b4d2c63678835bd39d' +
        '03' +
        Buffer.from('nft').toString('hex') +
        '01' +
        Buffer.from('n').toString('hex') +
        '0100000000000000000000000000000001' +
        '12' + // maybe sent
        '04' + // coinbase
        '11'.repeat(32)
      ).toLowerCase(),
    );
    const d = decodeTransaction(tx.serialize());
    assert.equal(d.postConditionMode, 'originator');
    assert.equal(d.txType, 'coinbase');
    assertSameJson(
      d.postConditions,
      [
        {
          principal: { type_id: 'principal_origin' },
          condition_code: 'maybe_sent',
          type: 'non_fungible',
          asset_value: { hex: '0x0100000000000000000000000000000001', repr: 'u1' },
          asset: {
            asset_name: 'n',
            contract_address: 'SP2J6ZY48GV1EZ5V2V5RB9MP66SW86PYKKNRV9EJ7',
            contract_name: 'nft',
          },
        },
      ],
      'post conditions',
    );
  });

  test('versioned smart contract (type 6) and legacy smart contract (type 1)', async () => {
    const deploy = async (clarityVersion: number | undefined) =>
      makeUnsignedContractDeploy({
        contractName: 'hello-world',
        codeBody: '(define-read-only (hi) (ok u1))\n',
        clarityVersion,
        publicKey: privateKeyToPublic(KEY_B) as string,
        fee: 10n,
        nonce: 0n,
        network: 'testnet',
      });
    const sender = getAddressFromPrivateKey(KEY_B, 'testnet');
    const v2 = decodeTransaction((await deploy(2)).serialize());
    assert.equal(v2.typeId, 6);
    assert.equal(v2.txType, 'smart_contract');
    assert.equal(v2.smartContractContractId, `${sender}.hello-world`);
    assertSameJson(
      v2.payload,
      {
        smart_contract: {
          clarity_version: 2,
          contract_id: `${sender}.hello-world`,
          source_code: '(define-read-only (hi) (ok u1))\n',
        },
      },
      'versioned contract',
    );
    // Type 1 (no Clarity version byte): rewrite the payload type of a versioned deploy.
    const hex = (await deploy(2)).serialize();
    const payloadAt = hex.indexOf('06020b68656c6c6f2d776f726c64');
    const legacy = hex.slice(0, payloadAt) + '01' + hex.slice(payloadAt + 4);
    const v1 = decodeTransaction(legacy);
    assert.equal(v1.typeId, 1);
    assert.deepEqual(v1.payload.smart_contract, {
      clarity_version: null,
      contract_id: `${sender}.hello-world`,
      source_code: '(define-read-only (hi) (ok u1))\n',
    });
  });

  test('coinbase kinds and tenure change', () => {
    const auth = createStandardAuth(
      createSingleSigSpendingCondition(0, privateKeyToPublic(KEY_A) as string, 4, 0),
    );
    const build = (payload: ConstructorParameters<typeof StacksTransactionWire>[0]['payload']) =>
      decodeTransaction(new StacksTransactionWire({ payload, auth, network: 'mainnet' }).serialize());
    const data = new Uint8Array(32).fill(0x61);
    const dataHex = '0x' + '61'.repeat(32);

    const plain = build(createCoinbasePayload(data));
    assert.equal(plain.typeId, 4);
    assertSameJson(plain.payload, { coinbase_payload: { data: dataHex, alt_recipient: null } }, 'coinbase');

    const alt = build(
      createCoinbasePayload(data, Cl.contractPrincipal('SP3D6PV2ACBPEKYJTCMH7HEN02KP87QSP8KTEH335', 'x')),
    );
    assert.equal(alt.typeId, 5);
    assertSameJson(
      alt.payload,
      { coinbase_payload: { data: dataHex, alt_recipient: 'SP3D6PV2ACBPEKYJTCMH7HEN02KP87QSP8KTEH335.x' } },
      'pay-to-alt coinbase',
    );

    const vrf = new Uint8Array(80).fill(0xab);
    const naka = build(createNakamotoCoinbasePayload(data, Cl.none(), vrf));
    assert.equal(naka.typeId, 8);
    assert.equal(naka.txType, 'coinbase');
    assertSameJson(
      naka.payload,
      { coinbase_payload: { data: dataHex, alt_recipient: null, vrf_proof: '0x' + 'ab'.repeat(80) } },
      'nakamoto coinbase',
    );

    const tenure = build(
      createTenureChangePayload(
        '11'.repeat(20),
        '22'.repeat(20),
        '33'.repeat(20),
        '44'.repeat(32),
        9,
        TenureChangeCause.Extended,
        '55'.repeat(20),
      ),
    );
    assert.equal(tenure.typeId, 7);
    assert.equal(tenure.txType, 'tenure_change');
    assertSameJson(
      tenure.payload,
      {
        tenure_change_payload: {
          tenure_consensus_hash: '0x' + '11'.repeat(20),
          prev_tenure_consensus_hash: '0x' + '22'.repeat(20),
          burn_view_consensus_hash: '0x' + '33'.repeat(20),
          previous_tenure_end: '0x' + '44'.repeat(32),
          previous_tenure_blocks: 9,
          cause: 'extended',
          pubkey_hash: '0x' + '55'.repeat(20),
        },
      },
      'tenure change',
    );
  });

  test('multi-sig sender gets the multi-sig address version', () => {
    // A P2SH spending condition with two public keys and one signature, built by hand.
    const signer = 'a46ff88886c2ef9762d970b4d2c63678835bd39d';
    const hex =
      '80' + // testnet
      '80000000' +
      '04' + // standard auth
      '01' + // P2SH
      signer +
      '0000000000000005' + // nonce
      '00000000000000c8' + // fee 200
      '00000003' +
      '00' +
      '02'.repeat(33) +
      '02' +
      '00'.repeat(65) +
      '00' +
      '03'.repeat(33) +
      '0001' + // 1 signature required
      '02' + // off-chain only
      '01' + // allow
      '00000000' +
      '03' + // poison microblock
      ('01' + '0005' + '00'.repeat(32) + '11'.repeat(32) + '22'.repeat(65)).repeat(2);
    const d = decodeTransaction(hex);
    assert.equal(d.senderAddress, 'SN2J6ZY48GV1EZ5V2V5RB9MP66SW86PYKKP6D2ZK9');
    assert.equal(d.nonce, 5);
    assert.equal(d.feeRate, '200');
    assert.equal(d.anchorMode, 'off_chain_only');
    assert.equal(d.postConditionMode, 'allow');
    assert.equal(d.txType, 'poison_microblock');
    const header = '0x01' + '0005' + '00'.repeat(32) + '11'.repeat(32) + '22'.repeat(65);
    assertSameJson(
      d.payload,
      { poison_microblock: { microblock_header_1: header, microblock_header_2: header } },
      'poison microblock',
    );
    assert.equal(d.byteLength, hex.length / 2);
  });

  test('rejects malformed input', () => {
    assert.throws(() => decodeTransaction('0x00'), /Unexpected end of data/);
    assert.throws(() => decodeTransaction('0x0'), /odd number of digits/);
    assert.throws(() => decodeTransaction('0xzz'), /Invalid hex characters/);
  });
});

/** Version, chain id and a single-sig standard auth (nonce 0, fee 0, zero signature), as hex. */
function singleSigTxPrefix(): string {
  return (
    '00' +
    '00000001' +
    '04' +
    '00' +
    'a46ff88886c2ef9762d970b4d2c63678835bd39d' +
    '0000000000000000' +
    '0000000000000000' +
    '00' +
    '00'.repeat(65)
  );
}
