import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { c32address, c32addressDecode, c32checkEncode } from 'c32check';
import {
  addressVersionForHashMode,
  isValidContractId,
  isValidContractName,
  isValidPrincipal,
  isValidStacksAddress,
  parsePrincipal,
} from '../../src/chain/address.js';
import { c32Address, c32AddressDecode } from '../../src/chain/c32.js';

const HASHES = [
  'a46ff88886c2ef9762d970b4d2c63678835bd39d',
  '0000000000000000000000000000000000000000',
  '0000000000000000000000000000000000000001',
  '1000000000000000000000000000000000000001',
  '1000000000000000000000000000000000000000',
];

// Reference vectors (c32check test suite): version → addresses of HASHES in order.
const VECTORS: Record<number, string[]> = {
  22: [
    'SP2J6ZY48GV1EZ5V2V5RB9MP66SW86PYKKNRV9EJ7',
    'SP000000000000000000002Q6VF78',
    'SP00000000000000000005JA84HQ',
    'SP80000000000000000000000000000004R0CMNV',
    'SP800000000000000000000000000000033H8YKK',
  ],
  0: [
    'S02J6ZY48GV1EZ5V2V5RB9MP66SW86PYKKPVKG2CE',
    'S0000000000000000000002AA028H',
    'S000000000000000000006EKBDDS',
    'S080000000000000000000000000000007R1QC00',
    'S080000000000000000000000000000003ENTGCQ',
  ],
  31: [
    'SZ2J6ZY48GV1EZ5V2V5RB9MP66SW86PYKKQ9H6DPR',
    'SZ000000000000000000002ZE1VMN',
    'SZ00000000000000000005HZ3DVN',
    'SZ80000000000000000000000000000004XBV6MS',
    'SZ800000000000000000000000000000007VF5G0',
  ],
  20: [
    'SM2J6ZY48GV1EZ5V2V5RB9MP66SW86PYKKQVX8X0G',
    'SM0000000000000000000062QV6X',
    'SM00000000000000000005VR75B2',
    'SM80000000000000000000000000000004WBEWKC',
    'SM80000000000000000000000000000000JGSYGV',
  ],
  26: [
    'ST2J6ZY48GV1EZ5V2V5RB9MP66SW86PYKKQYAC0RQ',
    'ST000000000000000000002AMW42H',
    'ST000000000000000000042DB08Y',
    'ST80000000000000000000000000000006BYJ4R4',
    'ST80000000000000000000000000000002YBNPV3',
  ],
  21: [
    'SN2J6ZY48GV1EZ5V2V5RB9MP66SW86PYKKP6D2ZK9',
    'SN000000000000000000003YDHWKJ',
    'SN00000000000000000005341MC8',
    'SN800000000000000000000000000000066KZWY0',
    'SN800000000000000000000000000000006H75AK',
  ],
};

describe('c32 addresses', () => {
  test('encode and decode the reference vectors', () => {
    for (const [version, addresses] of Object.entries(VECTORS)) {
      HASHES.forEach((hash, i) => {
        const bytes = Buffer.from(hash, 'hex');
        assert.equal(c32Address(Number(version), bytes), addresses[i]);
        const decoded = c32AddressDecode(addresses[i]);
        assert.ok(decoded);
        assert.equal(decoded.version, Number(version));
        assert.equal(Buffer.from(decoded.hash160).toString('hex'), hash);
      });
    }
  });

  test('agrees with c32check on random hashes and versions', () => {
    let seed = 7;
    const rand = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) % 256;
    for (let i = 0; i < 500; i++) {
      const bytes = Buffer.from(Array.from({ length: 20 }, (_, j) => (j < i % 4 ? 0 : rand())));
      const version = rand() % 32;
      const address = c32Address(version, bytes);
      assert.equal(address, c32address(version, bytes.toString('hex')));
      assert.deepEqual(c32addressDecode(address), [version, bytes.toString('hex')]);
    }
  });

  test('versions outside 0-31 and hashes that are not 20 bytes are refused', () => {
    assert.throws(() => c32Address(32, Buffer.alloc(20)), /Invalid c32 address version 32/);
    assert.throws(() => c32Address(-1, Buffer.alloc(20)), /Invalid c32 address version -1/);
    assert.throws(() => c32Address(22, Buffer.alloc(19)), /not a hash160/);
  });

  test('cached answers are copies: a caller changing one does not change the next', () => {
    const address = 'SP2J6ZY48GV1EZ5V2V5RB9MP66SW86PYKKNRV9EJ7';
    const first = c32AddressDecode(address)!;
    first.hash160.fill(0);
    assert.equal(Buffer.from(c32AddressDecode(address)!.hash160).toString('hex'), HASHES[0]);
  });

  test('hash mode to address version', () => {
    assert.equal(addressVersionForHashMode(0, true), 22);
    assert.equal(addressVersionForHashMode(0, false), 26);
    for (const mode of [1, 2, 3, 5, 7]) {
      assert.equal(addressVersionForHashMode(mode, true), 20);
      assert.equal(addressVersionForHashMode(mode, false), 21);
    }
    assert.throws(() => addressVersionForHashMode(4, true), /Unknown address hash mode/);
  });
});

describe('isValidStacksAddress', () => {
  test('valid addresses of any version', () => {
    for (const addresses of Object.values(VECTORS))
      for (const a of addresses) assert.equal(isValidStacksAddress(a), true, a);
    assert.equal(isValidStacksAddress('SMQ5V9ZVGN62G1X3VJNM2MF64SG6JXS8SKVNTGZQ'), true);
  });

  test('invalid: checksum, characters, length, type', () => {
    assert.equal(isValidStacksAddress('SP2J6ZY48GV1EZ5V2V5RB9MP66SW86PYKKNRV9EJ8'), false); // checksum
    assert.equal(isValidStacksAddress('SP2J6ZY48GV1EZ5V2V5RB9MP66SW86PYKKNRV9EJ'), false); // truncated
    assert.equal(isValidStacksAddress('SP2J6ZY48GV1EZ5V2V5RB9MP66SW86PYKKNRV9EJ7A'), false); // too long
    assert.equal(isValidStacksAddress('SP2J6ZY48GV1EZ5V2V5RB9MP66SW86PYKKNRV9EU7'), false); // 'U' is not c32
    assert.equal(isValidStacksAddress('SP2J6ZY48GV1EZ5V2V5RB9MP66SW86PYKKNRV9E-7'), false);
    assert.equal(isValidStacksAddress('SP2J6ZY48GV1EZ5V2V5RB9MP66SW86PYKKNRV9EÉ7'), false);
    assert.equal(isValidStacksAddress('SP123'), false);
    assert.equal(isValidStacksAddress(''), false);
    assert.equal(isValidStacksAddress('S'.repeat(41)), false);
    // 19- and 21-byte hashes with a valid checksum
    assert.equal(isValidStacksAddress(`S${c32checkEncode(22, '01'.repeat(19))}`), false);
    assert.equal(isValidStacksAddress(`S${c32checkEncode(22, '01'.repeat(21))}`), false);
    assert.equal(isValidStacksAddress(123 as unknown as string), false);
  });

  test('lenient like the reference codec: lowercase and O/L/I aliases', () => {
    assert.equal(isValidStacksAddress('sp2j6zy48gv1ez5v2v5rb9mp66sw86pykknrv9ej7'), true);
    assert.equal(isValidStacksAddress('SP2J6ZY48GVLEZ5V2V5RB9MP66SW86PYKKNRV9EJ7'), true);
    assert.equal(isValidStacksAddress('SPOOOOOOOOOOOOOOOOOOOO2Q6VF78'), true);
  });
});

describe('contract ids and principals', () => {
  test('contract names', () => {
    for (const name of ['pox', 'pox-4', 'a', 'A_b-9', 'x'.repeat(128)])
      assert.equal(isValidContractName(name), true, name);
    for (const name of ['', '1abc', '-abc', '_abc', 'ab.c', 'ab!', 'ab c', 'é', 'x'.repeat(129)]) {
      assert.equal(isValidContractName(name), false, name);
    }
  });

  test('isValidContractId', () => {
    assert.equal(isValidContractId('SP000000000000000000002Q6VF78.pox'), true);
    assert.equal(isValidContractId('ST2ZRX0K27GW0SP3GJCEMHD95TQGJMKB7G9Y0X1MH.my_contract-v2'), true);
    assert.equal(isValidContractId('SP000000000000000000002Q6VF78'), false);
    assert.equal(isValidContractId('SP000000000000000000002Q6VF78.'), false);
    assert.equal(isValidContractId('SP000000000000000000002Q6VF78.2pox'), false);
    assert.equal(isValidContractId('SP000000000000000000002Q6VF78.pox.extra'), false);
    assert.equal(isValidContractId('SP000000000000000000002Q6VF79.pox'), false); // bad checksum
    assert.equal(isValidContractId(`SP000000000000000000002Q6VF78.${'a'.repeat(129)}`), false);
  });

  test('isValidPrincipal and parsePrincipal', () => {
    assert.equal(isValidPrincipal('SP000000000000000000002Q6VF78'), true);
    assert.equal(isValidPrincipal('SP000000000000000000002Q6VF78.pox-4'), true);
    assert.equal(isValidPrincipal('SP000000000000000000002Q6VF78.pox 4'), false);
    assert.equal(isValidPrincipal('not-an-address'), false);
    const p = parsePrincipal('ST000000000000000000002AMW42H.pox-4');
    assert.equal(p.address, 'ST000000000000000000002AMW42H');
    assert.equal(p.version, 26);
    assert.equal(Buffer.from(p.hash160).toString('hex'), '00'.repeat(20));
    assert.equal(p.contractName, 'pox-4');
    assert.equal(parsePrincipal('SP000000000000000000002Q6VF78').contractName, null);
    assert.throws(() => parsePrincipal('SP000000000000000000002Q6VF79'), /Invalid Stacks address/);
    assert.throws(() => parsePrincipal('SP000000000000000000002Q6VF78.-x'), /Invalid contract name/);
  });
});
