import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { Cl, cvToHex, hexToCV, type ClarityValue } from '@stacks/transactions';
import {
  abiTypeToString,
  applyAbiToContractCall,
  clarityHexToRepr,
  decodeClarityValueList,
  parseClarityValue,
  readClarityValue,
} from '../../src/chain/clarity.js';
import { fixtureNames, loadGolden } from '../support/shared.js';
import { indexFixture } from './fixture-index.js';
import { referenceRepr } from './reference-repr.js';

const BOOT = 'SP000000000000000000002Q6VF78';

function repr(cv: ClarityValue): string {
  return clarityHexToRepr(cvToHex(cv));
}

/** The type a value's bytes say (what a contract call's argument shows without an ABI). */
function valueType(hex: string): string {
  return readClarityValue(Buffer.from(hex.replace(/^0x/, ''), 'hex'), 0).type;
}

function type(cv: ClarityValue): string {
  return valueType(cvToHex(cv));
}

/** A length-prefixed serialized string value of raw bytes. */
function stringValue(prefix: '0d' | '0e', hexBytes: string): string {
  return '0x' + prefix + (hexBytes.length / 2).toString(16).padStart(8, '0') + hexBytes;
}

describe('clarityHexToRepr', () => {
  test('integers', () => {
    assert.equal(repr(Cl.int(-5)), '-5');
    assert.equal(repr(Cl.int(0)), '0');
    assert.equal(repr(Cl.uint(5)), 'u5');
    assert.equal(repr(Cl.uint(2n ** 128n - 1n)), 'u340282366920938463463374607431768211455');
    assert.equal(repr(Cl.int(-(2n ** 127n))), '-170141183460469231731687303715884105728');
    assert.equal(repr(Cl.int(2n ** 127n - 1n)), '170141183460469231731687303715884105727');
    assert.equal(repr(Cl.int(2n ** 47n)), '140737488355328');
    assert.equal(repr(Cl.int(-(2n ** 47n) - 1n)), '-140737488355329');
    assert.equal(repr(Cl.uint(2n ** 48n)), 'u281474976710656');
    assert.equal(clarityHexToRepr('0x0100000000000000000000000000000001'), 'u1');
  });

  test('bools, buffers, optionals, responses', () => {
    assert.equal(repr(Cl.bool(true)), 'true');
    assert.equal(repr(Cl.bool(false)), 'false');
    assert.equal(repr(Cl.bufferFromHex('00ff10')), '0x00ff10');
    assert.equal(repr(Cl.bufferFromHex('')), '0x');
    assert.equal(repr(Cl.none()), 'none');
    assert.equal(repr(Cl.some(Cl.uint(1))), '(some u1)');
    assert.equal(repr(Cl.ok(Cl.bool(true))), '(ok true)');
    assert.equal(repr(Cl.error(Cl.uint(3))), '(err u3)');
    assert.equal(repr(Cl.ok(Cl.some(Cl.none()))), '(ok (some none))');
  });

  test('principals are quoted', () => {
    assert.equal(repr(Cl.standardPrincipal(BOOT)), `'${BOOT}`);
    assert.equal(repr(Cl.contractPrincipal(BOOT, 'pox-4')), `'${BOOT}.pox-4`);
    assert.equal(
      repr(Cl.standardPrincipal('ST1HB64MAJ1MBV4CQ80GF01DZS4T1DSMX20ADCRA4')),
      "'ST1HB64MAJ1MBV4CQ80GF01DZS4T1DSMX20ADCRA4",
    );
  });

  test('lists and tuples (sorted by field name, nested)', () => {
    assert.equal(repr(Cl.list([])), '(list)');
    assert.equal(repr(Cl.list([Cl.int(1), Cl.int(-2)])), '(list 1 -2)');
    assert.equal(repr(Cl.tuple({})), '(tuple)');
    assert.equal(repr(Cl.tuple({ b: Cl.bufferFromHex('00'), a: Cl.uint(1) })), '(tuple (a u1) (b 0x00))');
    assert.equal(
      repr(
        Cl.tuple({ outer: Cl.tuple({ z: Cl.list([Cl.tuple({ k: Cl.none() })]), y: Cl.stringAscii('s') }) }),
      ),
      '(tuple (outer (tuple (y "s") (z (list (tuple (k none)))))))',
    );
    // Unsorted and repeated names (not produced by the chain): sorted, the last value wins.
    const unsorted =
      '0x0c00000003' + '0162' + '0100000000000000000000000000000002' + '0161' + '03' + '0162' + '04';
    assert.equal(clarityHexToRepr(unsorted), '(tuple (a true) (b false))');
    assert.equal(valueType(unsorted), '(tuple (a bool) (b bool))');
  });

  test('string-ascii escapes like Rust escape_default', () => {
    assert.equal(repr(Cl.stringAscii('hello world')), '"hello world"');
    assert.equal(repr(Cl.stringAscii('')), '""');
    assert.equal(repr(Cl.stringAscii('say "hi" \\ it\'s')), '"say \\"hi\\" \\\\ it\\\'s"');
    assert.equal(repr(Cl.stringAscii('a\nb\tc\rd')), '"a\\nb\\tc\\rd"');
    assert.equal(clarityHexToRepr(stringValue('0d', '00017f80ff41')), '"\\x00\\x01\\x7f\\x80\\xffA"');
  });

  test('string-utf8 escapes non-ASCII as \\u{utf8 bytes}', () => {
    assert.equal(repr(Cl.stringUtf8('hé')), 'u"h\\u{c3a9}"');
    assert.equal(repr(Cl.stringUtf8('')), 'u""');
    assert.equal(repr(Cl.stringUtf8('€ 😀')), 'u"\\u{e282ac} \\u{f09f9880}"');
    assert.equal(repr(Cl.stringUtf8('"q"\n\\')), 'u"\\"q\\"\\n\\\\"');
    assert.equal(repr(Cl.stringUtf8('\u{7f}')), 'u"\\x7f"');
    // BOM is kept; invalid sequences become U+FFFD per maximal subpart (Rust from_utf8_lossy).
    assert.equal(clarityHexToRepr(stringValue('0e', 'efbbbf78')), 'u"\\u{efbbbf}x"');
    assert.equal(clarityHexToRepr(stringValue('0e', 'c08041')), 'u"\\u{efbfbd}\\u{efbfbd}A"');
    assert.equal(clarityHexToRepr(stringValue('0e', 'f09f98')), 'u"\\u{efbfbd}"');
    assert.equal(clarityHexToRepr(stringValue('0e', 'eda080')), 'u"\\u{efbfbd}\\u{efbfbd}\\u{efbfbd}"');
  });

  test('accepts bytes and hex without 0x; ignores trailing bytes', () => {
    assert.equal(clarityHexToRepr(Buffer.from('0703', 'hex')), '(ok true)');
    assert.equal(clarityHexToRepr('0703'), '(ok true)');
    assert.equal(clarityHexToRepr('0x0703ffff'), '(ok true)');
  });

  test('rejects malformed values', () => {
    assert.throws(() => clarityHexToRepr('0x'), /Unexpected end of data/);
    assert.throws(() => clarityHexToRepr('0x0100'), /Unexpected end of data/);
    assert.throws(() => clarityHexToRepr('0x0f'), /Bad Clarity type prefix 0x0f/);
    assert.throws(() => clarityHexToRepr('0x02ffffffff'), /Unexpected end of data/);
    assert.throws(() => clarityHexToRepr('0x' + '0a'.repeat(70) + '09'), /nested too deeply/);
  });
});

describe('value-derived types', () => {
  test('value-derived type names', () => {
    assert.equal(type(Cl.uint(1)), 'uint');
    assert.equal(type(Cl.int(-1)), 'int');
    assert.equal(type(Cl.bool(false)), 'bool');
    assert.equal(type(Cl.standardPrincipal(BOOT)), 'principal');
    assert.equal(type(Cl.contractPrincipal(BOOT, 'pox')), 'principal');
    assert.equal(type(Cl.bufferFromHex('00'.repeat(20))), '(buff 20)');
    assert.equal(type(Cl.stringAscii('hello')), '(string-ascii 5)');
    assert.equal(type(Cl.stringUtf8('hé!')), '(string-utf8 12)');
    assert.equal(type(Cl.none()), '(optional UnknownType)');
    assert.equal(type(Cl.some(Cl.bufferFromHex('001122'))), '(optional (buff 3))');
    assert.equal(type(Cl.ok(Cl.uint(1))), '(response uint UnknownType)');
    assert.equal(type(Cl.error(Cl.int(1))), '(response UnknownType int)');
    assert.equal(type(Cl.list([])), '(list 0 UnknownType)');
    // The first element decides the entry type.
    assert.equal(type(Cl.list([Cl.bufferFromHex('00'), Cl.bufferFromHex('0011')])), '(list 2 (buff 1))');
    assert.equal(
      type(Cl.tuple({ version: Cl.bufferFromHex('01'), hashbytes: Cl.bufferFromHex('00'.repeat(20)) })),
      '(tuple (hashbytes (buff 20)) (version (buff 1)))',
    );
    assert.equal(
      type(
        Cl.list([
          Cl.tuple({
            ustx: Cl.uint(1),
            to: Cl.standardPrincipal(BOOT),
            memo: Cl.some(Cl.bufferFromHex('01')),
          }),
        ]),
      ),
      '(list 1 (tuple (memo (optional (buff 1))) (to principal) (ustx uint)))',
    );
  });
});

describe('value lists and trees', () => {
  test('readClarityValue ends at the value; decodeClarityValueList keeps each value hex', () => {
    assert.deepEqual(readClarityValue(Buffer.from('0a0100000000000000000000000000000007ff', 'hex'), 0), {
      repr: '(some u7)',
      type: '(optional uint)',
      end: 18,
    });
    assert.deepEqual(decodeClarityValueList('0x00000002' + '03' + '0d0000000161'), [
      { hex: '0x03', repr: 'true', type: 'bool' },
      { hex: '0x0d0000000161', repr: '"a"', type: '(string-ascii 1)' },
    ]);
    assert.deepEqual(decodeClarityValueList('0x00000000'), []);
  });

  test('parseClarityValue gives a plain tree', () => {
    const tree = parseClarityValue(
      cvToHex(Cl.ok(Cl.tuple({ n: Cl.int(-3), p: Cl.contractPrincipal(BOOT, 'pox') }))),
    );
    assert.equal(tree.type, 'ok');
    assert.ok(tree.type === 'ok' && tree.value.type === 'tuple');
    const fields = tree.value.value;
    assert.deepEqual(fields.get('n'), { type: 'int', value: -3n });
    assert.deepEqual(fields.get('p'), { type: 'principal', value: `${BOOT}.pox` });
  });
});

describe('contract ABI helpers', () => {
  const abi = {
    functions: [
      {
        name: 'stack-stx',
        access: 'public',
        args: [
          { name: 'amount-ustx', type: 'uint128' },
          {
            name: 'pox-addr',
            type: {
              tuple: [
                { name: 'version', type: { buffer: { length: 1 } } },
                { name: 'hashbytes', type: { buffer: { length: 32 } } },
              ],
            },
          },
          { name: 'signer-sig', type: { optional: { buffer: { length: 65 } } } },
        ],
        outputs: { type: { response: { ok: 'bool', error: 'int128' } } },
      },
      { name: 'get-info', access: 'read_only', args: [], outputs: { type: 'bool' } },
      {
        name: 'f',
        access: 'private',
        args: [
          { name: 'a', type: { 'string-ascii': { length: 10 } } },
          { name: 'b', type: { 'string-utf8': { length: 20 } } },
          { name: 'c', type: { list: { type: 'principal', length: 5 } } },
          { name: 'd', type: { response: { ok: 'int128', error: 'none' } } },
          { name: 'e', type: 'trait_reference' },
        ],
      },
    ],
  };

  test('abiTypeToString', () => {
    assert.equal(abiTypeToString('int128'), 'int');
    assert.equal(abiTypeToString('uint128'), 'uint');
    assert.equal(abiTypeToString('bool'), 'bool');
    assert.equal(abiTypeToString({ buffer: { length: 33 } }), '(buff 33)');
    assert.equal(
      abiTypeToString({ list: { type: { 'string-ascii': { length: 3 } }, length: 2 } }),
      '(list 2 (string-ascii 3))',
    );
    assert.equal(abiTypeToString({ tuple: [] }), '(tuple )');
    assert.throws(() => abiTypeToString({ bogus: 1 }), /Type string unsupported/);
  });

  /** The signature `applyAbiToContractCall` gives a call of `name` (the ABI as an object or JSON). */
  const signature = (abi: unknown, name: string) =>
    applyAbiToContractCall({ contract_id: `${BOOT}.pox-4`, function_name: name, function_signature: '' }, abi)
      .function_signature;

  test('function signatures', () => {
    assert.equal(
      signature(abi, 'stack-stx'),
      '(define-public (stack-stx (amount-ustx uint) (pox-addr (tuple (version (buff 1)) (hashbytes (buff 32)))) (signer-sig (optional (buff 65)))))',
    );
    assert.equal(signature(JSON.stringify(abi), 'get-info'), '(define-read-only (get-info ))');
    assert.equal(
      signature(abi, 'f'),
      '(define-private (f (a (string-ascii 10)) (b (string-utf8 20)) (c (list 5 principal)) (d (response int none)) (e trait_reference)))',
    );
    // not in the ABI, or no ABI: the call unchanged
    assert.equal(signature(abi, 'missing'), '');
    assert.equal(signature(null, 'f'), '');
    assert.equal(signature('not json', 'f'), '');
  });

  test('applying an ABI to a decoded call: argument names and types', () => {
    const call = {
      contract_id: `${BOOT}.pox-4`,
      function_name: 'stack-stx',
      function_signature: '',
      function_args: [
        { hex: '0x01', repr: 'u1', name: '', type: 'uint' },
        { hex: '0x02', repr: '(tuple)', name: '', type: '(tuple)' },
        { hex: '0x09', repr: 'none', name: '', type: '(optional UnknownType)' },
        { hex: '0x03', repr: 'true', name: '', type: 'bool' },
      ],
    };
    const applied = applyAbiToContractCall(call, abi);
    assert.equal(applied.function_signature, signature(abi, 'stack-stx'));
    assert.deepEqual(
      applied.function_args?.map((a) => [a.name, a.type]),
      [
        ['amount-ustx', 'uint'],
        ['pox-addr', '(tuple (version (buff 1)) (hashbytes (buff 32)))'],
        ['signer-sig', '(optional (buff 65))'],
        ['', 'bool'], // beyond the ABI's arity: value-derived
      ],
    );
    const other = { ...call, function_name: 'other' };
    assert.equal(applyAbiToContractCall(other, abi), other);
    assert.equal(applyAbiToContractCall(call, { functions: [] }), call);
  });
});

describe('repr agrees with an independent decoder on all fixture values', () => {
  test('every raw_result and event value in the fixtures', (t) => {
    let count = 0;
    for (const name of fixtureNames()) {
      for (const hex of indexFixture(name).clarityValues) {
        assert.equal(clarityHexToRepr(hex), referenceRepr(hexToCV(hex)), hex);
        count++;
      }
    }
    assert.ok(count > 400);
    t.diagnostic(`${count} fixture Clarity values`);
  });

  test('every {hex, repr} pair and value-derived arg type in the golden responses', (t) => {
    let pairs = 0;
    let types = 0;
    const walk = (node: unknown): void => {
      if (Array.isArray(node)) {
        node.forEach(walk);
        return;
      }
      if (node === null || typeof node !== 'object') return;
      const o = node as Record<string, unknown>;
      if (typeof o.hex === 'string' && typeof o.repr === 'string') {
        assert.equal(clarityHexToRepr(o.hex), o.repr, o.hex);
        pairs++;
        if (o.name === '' && typeof o.type === 'string') {
          assert.equal(valueType(o.hex), o.type, o.hex);
          types++;
        }
      }
      Object.values(o).forEach(walk);
    };
    for (const name of fixtureNames()) for (const g of loadGolden(name)) walk(g.body);
    assert.ok(pairs > 1000);
    assert.ok(types > 50);
    t.diagnostic(`${pairs} golden {hex, repr} pairs, ${types} value-derived argument types`);
  });
});
