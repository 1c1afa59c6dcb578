import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { Cl, cvToHex } from '@stacks/transactions';
import { c32ToB58 } from 'c32check';
import { decodeBtcAddress } from '../../src/chain/pox-address.js';
import { decodeBurnchainOpTx, type BlockTxJson, type EventJson } from '../../src/chain/burnchain-op.js';
import { decodeTransaction, type DecodedTx } from '../../src/chain/transaction.js';
import { burnchainOpTxBlocks } from '../support/shared.js';

interface BlockJson {
  block_height: number;
  burn_block_height: number;
  transactions: BlockTxJson[];
  events: EventJson[];
}

function loadBlock(prefix: string): BlockJson {
  const block = burnchainOpTxBlocks().find((b) => b.file.startsWith(prefix));
  assert.ok(block, `fixture ${prefix}*`);
  return JSON.parse(block.body) as BlockJson;
}

function burnchainOp(block: BlockJson, txid: string, isMainnet = true): DecodedTx | null {
  const tx = block.transactions.find((t) => t.txid === txid);
  assert.ok(tx, `tx ${txid}`);
  assert.equal(tx.raw_tx, '0x00');
  return decodeBurnchainOpTx(tx, block.events, isMainnet, block.burn_block_height);
}

/** The fields every burnchain-op tx shares. */
function assertBurnchainOpBase(d: DecodedTx, sender: string): void {
  assert.equal(d.senderAddress, sender);
  assert.equal(d.nonce, 0);
  assert.equal(d.feeRate, '0');
  assert.equal(d.anchorMode, 'any');
  assert.equal(d.postConditionMode, 'allow');
  assert.deepEqual(d.postConditions, []);
  assert.equal(d.postConditionsHex, '0x0100000000');
  assert.equal(d.sponsored, false);
  assert.equal(d.sponsorAddress, null);
  assert.equal(d.sponsorNonce, null);
}

const UINT = (hex: string) => '0x01' + hex.padStart(32, '0');

describe('burnchain-op txs of the fixture blocks', () => {
  test('block 120: stx transfer', () => {
    const d = burnchainOp(
      loadBlock('token_transfer-120-'),
      '0xc0263c14f689ae757290f90765a28314497f52bd22b8bcbf87a12c764dd9d9be',
    );
    assert.ok(d);
    assertBurnchainOpBase(d, 'SMQ5V9ZVGN62G1X3VJNM2MF64SG6JXS8SKVNTGZQ');
    assert.equal(d.typeId, 0);
    assert.equal(d.txType, 'token_transfer');
    assert.equal(d.version, 0);
    assert.equal(d.chainId, 1);
    assert.deepEqual(d.payload, {
      token_transfer: {
        recipient_address: 'SP2ZP4GJDZJ1FDHTQ963F0292PE9J9752TZJ68F21',
        amount: '2000',
        memo: '0x',
      },
    });
    assert.equal(d.tokenTransferRecipient, 'SP2ZP4GJDZJ1FDHTQ963F0292PE9J9752TZJ68F21');
    assert.equal(d.tokenTransferAmount, '2000');
    assert.equal(d.contractCallContractId, null);
  });

  test('block 51655: stx transfer between multi-sig addresses', () => {
    const d = burnchainOp(
      loadBlock('token_transfer-51655-'),
      '0x2553c7c5b49eab5a0569e5d0f14c8f15945965a51976ac6697641003533986f6',
    );
    assert.ok(d);
    assertBurnchainOpBase(d, 'SM1J78KG0XBCYXS2NP1ZYJ06AGH5T5SKND701Q4CA');
    assert.deepEqual(d.payload, {
      token_transfer: {
        recipient_address: 'SMSJ4YQNTPHWE1KH325MHVHXDRZY7ZA21W989BPW',
        amount: '8333333333',
        memo: '0x',
      },
    });
  });

  test('block 1379: stx lock becomes pox stack-stx', () => {
    const d = burnchainOp(
      loadBlock('stx_lock-1379-'),
      '0xb182e2aacfe2ed4257d66dd2ed4872f672cf10d873852b5218f41594d6b42b11',
    );
    assert.ok(d);
    assertBurnchainOpBase(d, 'SM3KJBA4RZ7Z20KD2HBXNSXVPCR1D3CRAV6Q05MKT');
    assert.equal(d.typeId, 2);
    assert.equal(d.txType, 'contract_call');
    assert.equal(d.contractCallContractId, 'SP000000000000000000002Q6VF78.pox');
    assert.equal(d.contractCallFunctionName, 'stack-stx');
    assert.deepEqual(d.payload, {
      contract_call: {
        contract_id: 'SP000000000000000000002Q6VF78.pox',
        function_name: 'stack-stx',
        function_signature: '',
        function_args: [
          { hex: '0x010000000000000000000000104c533c00', repr: 'u70000000000', name: '', type: 'uint' },
          {
            hex: '0x0c00000002096861736862797465730200000014e725a898f9fe204da28afb5cf7766602d1b30ad90776657273696f6e020000000101',
            repr: '(tuple (hashbytes 0xe725a898f9fe204da28afb5cf7766602d1b30ad9) (version 0x01))',
            name: '',
            type: '(tuple (hashbytes (buff 20)) (version (buff 1)))',
          },
          { hex: '0x01000000000000000000000000000a30a7', repr: 'u667815', name: '', type: 'uint' },
          { hex: '0x0100000000000000000000000000000001', repr: 'u1', name: '', type: 'uint' },
        ],
      },
    });
    assert.equal(
      d.contractCallFunctionArgsHex,
      '0x00000004010000000000000000000000104c533c000c00000002096861736862797465730200000014e725a898f9fe204da28afb5cf7766602d1b30ad90776657273696f6e02000000010101000000000000000000000000000a30a70100000000000000000000000000000001',
    );
  });

  test('block 51451: stx lock (12 cycles) and a transfer in one block', () => {
    const block = loadBlock('stx_lock-51451-');
    const lock = burnchainOp(block, '0xa64ad136e51a3a50eb1fdfd7eefa0b7aeb89e2521b2a2218d887477baa1775c9');
    assert.ok(lock);
    assertBurnchainOpBase(lock, 'SM313VGCT3TK1M82K2AS2KHNX813BY5FKCXJSKZ4E');
    const args = (lock.payload.contract_call as { function_args: { hex: string; repr: string }[] })
      .function_args;
    assert.deepEqual(
      args.map((a) => a.repr),
      [
        'u3892859330416',
        '(tuple (hashbytes 0xc23dc19a1ea61a205312b229c6bd4046bf15f367) (version 0x01))',
        'u726368',
        'u12',
      ],
    );
    assert.equal(args[0].hex, '0x0100000000000000000000038a607f5f70');
    const transfer = burnchainOp(block, '0xa794d0a5d3767e94ae651558a8335b19a203464c5bbcace29ab43af91429c197');
    assert.ok(transfer);
    assertBurnchainOpBase(transfer, 'SM2KX7J6F4Z039FJHHDSW1VXFX1HF7310ZSNDRGCK');
    assert.deepEqual(transfer.payload, {
      token_transfer: {
        recipient_address: 'SP1THSVCQSKRCGTNYYKYS58054N2K0MV5D5X09MBP',
        amount: '1000000000000',
        memo: '0x',
      },
    });
  });

  test('failed burnchain ops without events are skipped (null)', () => {
    assert.equal(
      burnchainOp(
        loadBlock('failed-1352-'),
        '0x2d825fbeb5368dcaeecdce053860e7d900bc66701751037f8b92dd7f8fd2a1b0',
      ),
      null,
    );
    assert.equal(
      burnchainOp(
        loadBlock('failed-6910-'),
        '0x763e485177d772efdb1baede3276d5091a96e90fbb156d25427c1a2e7ea1d6fd',
      ),
      null,
    );
  });

  test('block 1994 (relabelled 1) has no burnchain-op tx; its contract call decodes normally', () => {
    const block = loadBlock('stx_lock-1994-');
    assert.equal(block.transactions.filter((t) => t.raw_tx === '0x00').length, 0);
    const tx = block.transactions.find(
      (t) => t.txid === '0xd45e090ac442380cf50655e3d1c904c355a501d6dffa3b5e4799083062469dbc',
    );
    assert.ok(tx);
    const d = decodeTransaction(tx.raw_tx);
    assert.equal(d.txType, 'contract_call');
    assert.equal(
      d.contractCallContractId,
      'SM3KNVZS30WM7F89SXKVVFY4SN9RMPZZ9FX929N0V.public-pools-strategy-manager-v2',
    );
    assert.equal(d.contractCallFunctionName, 'fund-strategy');
    assert.equal(d.senderAddress, 'SPGAB1P3YV109E22KXFJYM63GK0G21BYX50CQ80B');
  });
});

describe('burnchain-op txs from constructed inputs', () => {
  const STACKER = 'ST2ZRX0K27GW0SP3GJCEMHD95TQGJMKB7G9Y0X1MH';
  const DELEGATE = 'ST1HB64MAJ1MBV4CQ80GF01DZS4T1DSMX20ADCRA4';
  const TXID = '0x' + 'ab'.repeat(32);
  const okTrue = '0x0703';
  const signerKey = '03' + '11'.repeat(32);

  function poxPrint(
    contract: string,
    name: string,
    stacker: string,
    data: Parameters<typeof Cl.tuple>[0],
  ): EventJson {
    return {
      txid: TXID,
      type: 'contract_event',
      contract_event: {
        contract_identifier: contract,
        topic: 'print',
        raw_value: cvToHex(
          Cl.ok(
            Cl.tuple({
              name: Cl.stringAscii(name),
              stacker: Cl.principal(stacker),
              balance: Cl.uint(1),
              locked: Cl.uint(0),
              'burnchain-unlock-height': Cl.uint(0),
              data: Cl.tuple(data),
            }),
          ),
        ),
      },
    };
  }

  test('pox-4 stack-stx burnchain op (testnet)', () => {
    const tx: BlockTxJson = {
      txid: TXID,
      raw_tx: '0x00',
      raw_result: cvToHex(
        Cl.ok(
          Cl.tuple({
            'lock-amount': Cl.uint(5),
            stacker: Cl.principal(STACKER),
            'unlock-burn-height': Cl.uint(300),
          }),
        ),
      ),
      burnchain_op: {
        stack_stx: {
          auth_id: 123456789,
          burn_block_height: 121,
          max_amount: 4500432000000000,
          num_cycles: 6,
          reward_addr: 'tb1qrp33g0q5c5txsp9arysrx4k6zdkfs4nce4xj0gdcccefvpysxf3q0sl5k7',
          sender: { address: STACKER, address_hash_bytes: '0x00', address_version: 26 },
          signer_key: signerKey,
          stacked_ustx: 4500432000000000,
          vtxindex: 3,
        },
      },
    };
    const events: EventJson[] = [
      {
        txid: TXID,
        type: 'stx_lock_event',
        stx_lock_event: {
          locked_amount: '5',
          unlock_height: '300',
          locked_address: STACKER,
          contract_identifier: 'ST000000000000000000002AMW42H.pox-4',
        },
      },
    ];
    const d = decodeBurnchainOpTx(tx, events, false, 121);
    assert.ok(d);
    assertBurnchainOpBase(d, STACKER);
    assert.equal(d.version, 0x80);
    assert.equal(d.chainId, 0x80000000);
    assert.equal(d.contractCallContractId, 'ST000000000000000000002AMW42H.pox-4');
    assert.equal(d.contractCallFunctionName, 'stack-stx');
    const args = (d.payload.contract_call as { function_args: { hex: string; repr: string; type: string }[] })
      .function_args;
    assert.deepEqual(
      args.map((a) => [a.hex, a.repr]),
      [
        [UINT('ffd1e7ab22000'), 'u4500432000000000'],
        [
          '0x0c000000020968617368627974657302000000201863143c14c5166804bd19203356da136c985678cd4d27a1b8c63296049032620776657273696f6e020000000105',
          '(tuple (hashbytes 0x1863143c14c5166804bd19203356da136c985678cd4d27a1b8c6329604903262) (version 0x05))',
        ],
        [UINT('79'), 'u121'],
        [UINT('6'), 'u6'],
        ['0x09', 'none'],
        ['0x0200000021' + signerKey, '0x' + signerKey],
        [UINT('ffd1e7ab22000'), 'u4500432000000000'],
        [UINT('75bcd15'), 'u123456789'],
      ],
    );
    assert.deepEqual(
      args.map((a) => a.type),
      [
        'uint',
        '(tuple (hashbytes (buff 32)) (version (buff 1)))',
        'uint',
        'uint',
        '(optional UnknownType)',
        '(buff 33)',
        'uint',
        'uint',
      ],
    );
  });

  test('stx lock uses the pox stack-stx print event pox-addr when present (testnet cycles of 50)', () => {
    const tx: BlockTxJson = {
      txid: TXID,
      raw_tx: '0x00',
      raw_result: cvToHex(
        Cl.ok(
          Cl.tuple({
            'lock-amount': Cl.uint(77),
            stacker: Cl.principal(STACKER),
            'unlock-burn-height': Cl.uint(260),
          }),
        ),
      ),
    };
    const events = [
      poxPrint('ST000000000000000000002AMW42H.pox-3', 'stack-stx', STACKER, {
        'lock-amount': Cl.uint(77),
        'pox-addr': Cl.tuple({
          version: Cl.bufferFromHex('02'),
          hashbytes: Cl.bufferFromHex('aa'.repeat(20)),
        }),
      }),
      {
        txid: TXID,
        type: 'stx_lock_event',
        stx_lock_event: {
          locked_amount: '77',
          unlock_height: '260',
          locked_address: STACKER,
          contract_identifier: 'ST000000000000000000002AMW42H.pox-3',
        },
      },
      {
        txid: '0x' + '00'.repeat(32),
        type: 'stx_transfer_event',
        stx_transfer_event: { sender: STACKER, recipient: DELEGATE, amount: '1' },
      },
    ];
    const d = decodeBurnchainOpTx(tx, events, false, 100);
    assert.ok(d);
    assertBurnchainOpBase(d, STACKER);
    assert.equal(d.contractCallContractId, 'ST000000000000000000002AMW42H.pox-3');
    const args = (d.payload.contract_call as { function_args: { repr: string }[] }).function_args;
    // P2SH-P2WPKH (version 2) round-trips through a P2SH Bitcoin address: version 1.
    assert.deepEqual(
      args.map((a) => a.repr),
      ['u77', `(tuple (hashbytes 0x${'aa'.repeat(20)}) (version 0x01))`, 'u100', 'u3'],
    );
  });

  test('pox-2 delegate-stx print event', () => {
    const tx: BlockTxJson = { txid: TXID, raw_tx: '0x00', raw_result: okTrue };
    const events = [
      poxPrint(
        'SP000000000000000000002Q6VF78.pox-2',
        'delegate-stx',
        'SP3D6PV2ACBPEKYJTCMH7HEN02KP87QSP8KTEH335',
        {
          'amount-ustx': Cl.uint(1000),
          'delegate-to': Cl.contractPrincipal('SP3D6PV2ACBPEKYJTCMH7HEN02KP87QSP8KTEH335', 'pool'),
          'unlock-burn-height': Cl.some(Cl.uint(800000)),
          'pox-addr': Cl.none(),
        },
      ),
    ];
    const d = decodeBurnchainOpTx(tx, events, true, 700000);
    assert.ok(d);
    assertBurnchainOpBase(d, 'SP3D6PV2ACBPEKYJTCMH7HEN02KP87QSP8KTEH335');
    assert.equal(d.contractCallContractId, 'SP000000000000000000002Q6VF78.pox-2');
    assert.equal(d.contractCallFunctionName, 'delegate-stx');
    const args = (d.payload.contract_call as { function_args: { repr: string; type: string }[] })
      .function_args;
    assert.deepEqual(
      args.map((a) => [a.repr, a.type]),
      [
        ['u1000', 'uint'],
        ["'SP3D6PV2ACBPEKYJTCMH7HEN02KP87QSP8KTEH335.pool", 'principal'],
        ['(some u800000)', '(optional uint)'],
        ['none', '(optional UnknownType)'],
      ],
    );
  });

  test('pox-4 delegate-stx burnchain op', () => {
    const tx: BlockTxJson = {
      txid: TXID,
      raw_tx: '0x00',
      raw_result: okTrue,
      burnchain_op: {
        delegate_stx: {
          burn_block_height: 121,
          delegate_to: { address: DELEGATE, address_hash_bytes: '0x00', address_version: 26 },
          delegated_ustx: 4500432000000000,
          reward_addr: [1, 'tb1qrp33g0q5c5txsp9arysrx4k6zdkfs4nce4xj0gdcccefvpysxf3q0sl5k7'],
          sender: { address: STACKER, address_hash_bytes: '0x00', address_version: 26 },
          until_burn_height: 200,
          vtxindex: 3,
        },
      },
    };
    const events = [
      poxPrint('ST000000000000000000002AMW42H.pox-4', 'delegate-stx', STACKER, {
        'amount-ustx': Cl.uint(4500432000000000n),
        'delegate-to': Cl.principal(DELEGATE),
        'unlock-burn-height': Cl.some(Cl.uint(200)),
        'pox-addr': Cl.none(),
      }),
    ];
    const d = decodeBurnchainOpTx(tx, events, false, 121);
    assert.ok(d);
    assertBurnchainOpBase(d, STACKER);
    assert.equal(d.contractCallContractId, 'ST000000000000000000002AMW42H.pox-4');
    const args = (d.payload.contract_call as { function_args: { repr: string }[] }).function_args;
    assert.deepEqual(
      args.map((a) => a.repr),
      [
        'u4500432000000000',
        `'${DELEGATE}`,
        '(some u200)',
        '(some (tuple (hashbytes 0x1863143c14c5166804bd19203356da136c985678cd4d27a1b8c6329604903262) (version 0x05)))',
      ],
    );
  });

  test('subnet deposits: stx, ft and nft mints', () => {
    const tx: BlockTxJson = { txid: TXID, raw_tx: '0x00', raw_result: okTrue };
    const stx = decodeBurnchainOpTx(
      tx,
      [{ txid: TXID, type: 'stx_mint_event', stx_mint_event: { recipient: STACKER, amount: '42' } }],
      false,
      1,
    );
    assert.ok(stx);
    assertBurnchainOpBase(stx, 'ST000000000000000000002AMW42H');
    assert.deepEqual(stx.payload, {
      token_transfer: { recipient_address: STACKER, amount: '42', memo: '0x' },
    });

    const ft = decodeBurnchainOpTx(
      tx,
      [
        {
          txid: TXID,
          type: 'ft_mint_event',
          ft_mint_event: { asset_identifier: `${DELEGATE}.tok::tok`, recipient: STACKER, amount: '9' },
        },
      ],
      false,
      1,
    );
    assert.ok(ft);
    assertBurnchainOpBase(ft, STACKER);
    assert.equal(ft.contractCallContractId, `${DELEGATE}.tok`);
    assert.equal(ft.contractCallFunctionName, 'deposit-from-burnchain');
    assert.deepEqual(
      (ft.payload.contract_call as { function_args: { repr: string }[] }).function_args.map((a) => a.repr),
      ['u9', `'${STACKER}`],
    );

    const nft = decodeBurnchainOpTx(
      tx,
      [
        {
          txid: TXID,
          type: 'nft_mint_event',
          nft_mint_event: {
            asset_identifier: `${DELEGATE}.art::art`,
            recipient: STACKER,
            raw_value: cvToHex(Cl.uint(5)),
          },
        },
      ],
      false,
      1,
    );
    assert.ok(nft);
    assert.deepEqual(
      (nft.payload.contract_call as { function_args: { repr: string }[] }).function_args.map((a) => a.repr),
      ['u5', `'${STACKER}`],
    );
  });

  test('events that allow no reconstruction throw', () => {
    const tx: BlockTxJson = { txid: TXID, raw_tx: '0x00', raw_result: okTrue };
    assert.throws(
      () =>
        decodeBurnchainOpTx(
          tx,
          [{ txid: TXID, type: 'stx_burn_event', stx_burn_event: { sender: STACKER, amount: '1' } }],
          false,
          1,
        ),
      /Unable to generate transaction/,
    );
  });
});

describe('Bitcoin reward addresses', () => {
  test('decodeBtcAddress', () => {
    const hex = (a: string) => {
      const d = decodeBtcAddress(a);
      return [d.version, Buffer.from(d.hashbytes).toString('hex')];
    };
    assert.deepEqual(hex('BC1QW508D6QEJXTDG4Y5R3ZARVARY0C5XW7KV8F3T4'), [
      4,
      '751e76e8199196d454941c45d1b3a323f1433bd6',
    ]);
    assert.deepEqual(hex('bc1p0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7vqzk5jj0'), [
      6,
      '79be667ef9dcbbac55a06295ce870b07029bfcdb2dce28d959f2815b16f81798',
    ]);
    const hash = 'a46ff88886c2ef9762d970b4d2c63678835bd39d';
    assert.deepEqual(hex(c32ToB58('SP2J6ZY48GV1EZ5V2V5RB9MP66SW86PYKKNRV9EJ7')), [0, hash]);
    assert.deepEqual(hex(c32ToB58('SM2J6ZY48GV1EZ5V2V5RB9MP66SW86PYKKQVX8X0G')), [1, hash]);
    assert.deepEqual(hex(c32ToB58('ST2J6ZY48GV1EZ5V2V5RB9MP66SW86PYKKQYAC0RQ')), [0, hash]);
    assert.deepEqual(hex(c32ToB58('SN2J6ZY48GV1EZ5V2V5RB9MP66SW86PYKKP6D2ZK9')), [1, hash]);
    assert.throws(() => decodeBtcAddress('bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t5'), /not a valid/);
    assert.throws(() => decodeBtcAddress('nonsense'), /not a valid/);
  });
});
