// Clarity values: a direct decoder from consensus bytes to the repr and type-signature strings the
// original API shows (the rules of stacks-encoding-native-js 1.2.0), plus contract-ABI type strings.
import { asBuffer, ByteReader, hexToBuffer } from './bytes.js';
import { c32Address } from './c32.js';

const enum Prefix {
  Int = 0x00,
  UInt = 0x01,
  Buffer = 0x02,
  BoolTrue = 0x03,
  BoolFalse = 0x04,
  PrincipalStandard = 0x05,
  PrincipalContract = 0x06,
  ResponseOk = 0x07,
  ResponseErr = 0x08,
  OptionalNone = 0x09,
  OptionalSome = 0x0a,
  List = 0x0b,
  Tuple = 0x0c,
  StringAscii = 0x0d,
  StringUtf8 = 0x0e,
}

/** Nesting guard against pathological input (real values are far shallower). */
const MAX_DEPTH = 64;
const UNKNOWN_TYPE = 'UnknownType';

const HEX2: string[] = [];
for (let i = 0; i < 256; i++) HEX2.push(i.toString(16).padStart(2, '0'));

/**
 * Rust's `std::ascii::escape_default` for one byte: `\t \r \n \\ \' \"` escaped, printable ASCII kept,
 * everything else as `\xNN` (lowercase hex).
 */
const ASCII_ESCAPE: string[] = [];
for (let b = 0; b < 256; b++) {
  if (b === 0x09) ASCII_ESCAPE.push('\\t');
  else if (b === 0x0d) ASCII_ESCAPE.push('\\r');
  else if (b === 0x0a) ASCII_ESCAPE.push('\\n');
  else if (b === 0x5c) ASCII_ESCAPE.push('\\\\');
  else if (b === 0x27) ASCII_ESCAPE.push("\\'");
  else if (b === 0x22) ASCII_ESCAPE.push('\\"');
  else if (b >= 0x20 && b <= 0x7e) ASCII_ESCAPE.push(String.fromCharCode(b));
  else ASCII_ESCAPE.push('\\x' + HEX2[b]);
}

/** True for bytes rendered unchanged by `escape_default`. */
function isPlain(b: number): boolean {
  return b >= 0x20 && b <= 0x7e && b !== 0x5c && b !== 0x27 && b !== 0x22;
}

function readInt128(buf: Buffer, p: number, signed: boolean): string {
  // Fast path: the top 10 bytes are sign extension, the value fits a 48-bit JS number.
  const fill = signed && buf[p] === 0xff ? 0xff : 0;
  let small = true;
  for (let i = 0; i < 10; i++) {
    if (buf[p + i] !== fill) {
      small = false;
      break;
    }
  }
  if (small) {
    if (fill === 0 && buf[p + 10] < 0x80) return String(buf.readUIntBE(p + 10, 6));
    if (fill === 0xff && buf[p + 10] >= 0x80) return String(buf.readIntBE(p + 10, 6));
  }
  const value = (buf.readBigUInt64BE(p) << 64n) | buf.readBigUInt64BE(p + 8);
  return (signed ? BigInt.asIntN(128, value) : value).toString();
}

function asciiRepr(buf: Buffer, start: number, end: number): string {
  let plain = true;
  for (let i = start; i < end; i++) {
    if (!isPlain(buf[i])) {
      plain = false;
      break;
    }
  }
  if (plain) return '"' + buf.toString('latin1', start, end) + '"';
  let out = '"';
  for (let i = start; i < end; i++) out += ASCII_ESCAPE[buf[i]];
  return out + '"';
}

function utf8Escape(cp: number): string {
  if (cp < 0x80) return ASCII_ESCAPE[cp];
  if (cp < 0x800) return '\\u{' + HEX2[0xc0 | (cp >> 6)] + HEX2[0x80 | (cp & 0x3f)] + '}';
  if (cp < 0x10000) {
    return (
      '\\u{' + HEX2[0xe0 | (cp >> 12)] + HEX2[0x80 | ((cp >> 6) & 0x3f)] + HEX2[0x80 | (cp & 0x3f)] + '}'
    );
  }
  return (
    '\\u{' +
    HEX2[0xf0 | (cp >> 18)] +
    HEX2[0x80 | ((cp >> 12) & 0x3f)] +
    HEX2[0x80 | ((cp >> 6) & 0x3f)] +
    HEX2[0x80 | (cp & 0x3f)] +
    '}'
  );
}

/**
 * string-utf8 repr: invalid UTF-8 is replaced by U+FFFD (like Rust's `from_utf8_lossy`), ASCII chars
 * escaped with `escape_default`, every other char as `\u{<hex of its UTF-8 bytes>}`.
 * Also reports the char count (the type signature uses `chars * 4`).
 */
function utf8Repr(buf: Buffer, start: number, end: number): { repr: string; chars: number } {
  let plain = true;
  for (let i = start; i < end; i++) {
    if (!isPlain(buf[i])) {
      plain = false;
      break;
    }
  }
  if (plain) return { repr: 'u"' + buf.toString('latin1', start, end) + '"', chars: end - start };
  const text = buf.toString('utf8', start, end);
  let out = 'u"';
  let chars = 0;
  for (let i = 0; i < text.length; i++) {
    let cp = text.charCodeAt(i);
    if (cp >= 0xd800 && cp <= 0xdbff && i + 1 < text.length) {
      const lo = text.charCodeAt(i + 1);
      if (lo >= 0xdc00 && lo <= 0xdfff) {
        cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
        i++;
      }
    }
    out += utf8Escape(cp);
    chars++;
  }
  return { repr: out + '"', chars };
}

/**
 * Walks one Clarity value. Returns its repr; when `wantType` is set, leaves its type signature in
 * `r.type` (read it right after the call, before decoding anything else).
 */
class ValueReader extends ByteReader {
  type = '';

  value(depth: number, wantType: boolean): string {
    if (depth > MAX_DEPTH) throw new Error('Clarity value nested too deeply');
    const prefix = this.u8();
    const buf = this.buf;
    switch (prefix) {
      case Prefix.Int:
      case Prefix.UInt: {
        const p = this.take(16);
        const digits = readInt128(buf, p, prefix === Prefix.Int);
        if (wantType) this.type = prefix === Prefix.Int ? 'int' : 'uint';
        return prefix === Prefix.Int ? digits : 'u' + digits;
      }
      case Prefix.Buffer: {
        const len = this.u32();
        const p = this.take(len);
        if (wantType) this.type = `(buff ${len})`;
        return '0x' + buf.toString('hex', p, p + len);
      }
      case Prefix.BoolTrue:
      case Prefix.BoolFalse:
        if (wantType) this.type = 'bool';
        return prefix === Prefix.BoolTrue ? 'true' : 'false';
      case Prefix.PrincipalStandard:
      case Prefix.PrincipalContract: {
        const version = this.u8();
        const p = this.take(20);
        const address = c32Address(version, buf.subarray(p, p + 20));
        if (wantType) this.type = 'principal';
        if (prefix === Prefix.PrincipalStandard) return "'" + address;
        return "'" + address + '.' + this.shortString();
      }
      case Prefix.ResponseOk:
      case Prefix.ResponseErr:
      case Prefix.OptionalSome: {
        const inner = this.value(depth + 1, wantType);
        if (prefix === Prefix.OptionalSome) {
          if (wantType) this.type = `(optional ${this.type})`;
          return `(some ${inner})`;
        }
        if (prefix === Prefix.ResponseOk) {
          if (wantType) this.type = `(response ${this.type} ${UNKNOWN_TYPE})`;
          return `(ok ${inner})`;
        }
        if (wantType) this.type = `(response ${UNKNOWN_TYPE} ${this.type})`;
        return `(err ${inner})`;
      }
      case Prefix.OptionalNone:
        if (wantType) this.type = `(optional ${UNKNOWN_TYPE})`;
        return 'none';
      case Prefix.List: {
        const len = this.u32();
        let out = '(list';
        let firstType = UNKNOWN_TYPE;
        for (let i = 0; i < len; i++) {
          out += ' ' + this.value(depth + 1, wantType && i === 0);
          if (wantType && i === 0) firstType = this.type;
        }
        if (wantType) this.type = `(list ${len} ${firstType})`;
        return out + ')';
      }
      case Prefix.Tuple:
        return this.tuple(depth, wantType);
      case Prefix.StringAscii: {
        const len = this.u32();
        const p = this.take(len);
        if (wantType) this.type = `(string-ascii ${len})`;
        return asciiRepr(buf, p, p + len);
      }
      case Prefix.StringUtf8: {
        const len = this.u32();
        const p = this.take(len);
        const { repr, chars } = utf8Repr(buf, p, p + len);
        if (wantType) this.type = `(string-utf8 ${chars * 4})`;
        return repr;
      }
      default:
        throw new Error(`Bad Clarity type prefix 0x${HEX2[prefix]} at offset ${this.pos - 1}`);
    }
  }

  /** Tuples print sorted by field name (a BTreeMap upstream; a repeated name keeps its last value). */
  private tuple(depth: number, wantType: boolean): string {
    const len = this.u32();
    const names: string[] = [];
    const reprs: string[] = [];
    const types: string[] = [];
    let sorted = true;
    for (let i = 0; i < len; i++) {
      const name = this.shortString();
      const repr = this.value(depth + 1, wantType);
      if (i > 0 && !(names[i - 1] < name)) sorted = false;
      names.push(name);
      reprs.push(repr);
      if (wantType) types.push(this.type);
    }
    let order: number[] | null = null;
    if (!sorted) {
      const last = new Map<string, number>();
      names.forEach((n, i) => last.set(n, i));
      order = [...last.values()].sort((a, b) => (names[a] < names[b] ? -1 : names[a] > names[b] ? 1 : 0));
    }
    let out = '(tuple';
    let type = '(tuple';
    const count = order ? order.length : len;
    for (let k = 0; k < count; k++) {
      const i = order ? order[k] : k;
      out += ` (${names[i]} ${reprs[i]})`;
      if (wantType) type += ` (${names[i]} ${types[i]})`;
    }
    if (wantType) this.type = type + ')';
    return out + ')';
  }
}

export interface DecodedClarityValue {
  /** `0x`-hex of exactly the value's bytes. */
  hex: string;
  repr: string;
  /** Value-derived type signature, e.g. `(buff 20)`, `(list 3 uint)`, `(optional UnknownType)`. */
  type: string;
}

function toBuffer(input: string | Uint8Array): Buffer {
  return typeof input === 'string' ? hexToBuffer(input) : asBuffer(input);
}

/** Repr of a serialized Clarity value (`0x`-hex or bytes), e.g. `(tuple (a u1) (b 'SP…))`. */
export function clarityHexToRepr(hex: string | Uint8Array): string {
  return new ValueReader(toBuffer(hex)).value(0, false);
}

/** Repr and type of the value at `offset`, plus the offset just past it. */
export function readClarityValue(
  buf: Buffer,
  offset: number,
  wantType = true,
): { repr: string; type: string; end: number } {
  const r = new ValueReader(buf, offset);
  const repr = r.value(0, wantType);
  return { repr, type: r.type, end: r.pos };
}

/** Decodes a u32-count-prefixed list of values (a contract call's serialized function arguments). */
export function decodeClarityValueList(input: string | Uint8Array): DecodedClarityValue[] {
  const buf = toBuffer(input);
  const r = new ByteReader(buf);
  const count = r.u32();
  const out: DecodedClarityValue[] = [];
  let pos = r.pos;
  for (let i = 0; i < count; i++) {
    const { repr, type, end } = readClarityValue(buf, pos);
    out.push({ hex: '0x' + buf.toString('hex', pos, end), repr, type });
    pos = end;
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Contract ABI (the `contract_interface` / `contract_abi` JSON of deploy txs)

type ClarityAbiType =
  | string
  | { buffer: { length: number } }
  | { 'string-ascii': { length: number } }
  | { 'string-utf8': { length: number } }
  | { response: { ok: ClarityAbiType; error: ClarityAbiType } }
  | { optional: ClarityAbiType }
  | { tuple: { name: string; type: ClarityAbiType }[] }
  | { list: { type: ClarityAbiType; length: number } };

interface ClarityAbiFunction {
  name: string;
  access: string;
  args: { name: string; type: ClarityAbiType }[];
  outputs?: { type: ClarityAbiType };
}

/**
 * ABI type to its Clarity type name (`int128`→`int`, `uint128`→`uint`, `(buff 32)`, `(tuple (a uint))`…).
 * @internal exported for its tests
 */
export function abiTypeToString(abiType: unknown): string {
  if (typeof abiType === 'string') {
    if (abiType === 'int128') return 'int';
    if (abiType === 'uint128') return 'uint';
    return abiType;
  }
  if (abiType !== null && typeof abiType === 'object') {
    const t = abiType as Record<string, unknown>;
    if ('buffer' in t) return `(buff ${(t.buffer as { length: number }).length})`;
    if ('string-ascii' in t) return `(string-ascii ${(t['string-ascii'] as { length: number }).length})`;
    if ('string-utf8' in t) return `(string-utf8 ${(t['string-utf8'] as { length: number }).length})`;
    if ('response' in t) {
      const r = t.response as { ok: unknown; error: unknown };
      return `(response ${abiTypeToString(r.ok)} ${abiTypeToString(r.error)})`;
    }
    if ('optional' in t) return `(optional ${abiTypeToString(t.optional)})`;
    if ('tuple' in t) {
      const fields = t.tuple as { name: string; type: unknown }[];
      return `(tuple ${fields.map((f) => `(${f.name} ${abiTypeToString(f.type)})`).join(' ')})`;
    }
    if ('list' in t) {
      const l = t.list as { type: unknown; length: number };
      return `(list ${l.length} ${abiTypeToString(l.type)})`;
    }
  }
  throw new Error(`Type string unsupported for Clarity type: ${JSON.stringify(abiType)}`);
}

function parseAbi(abi: unknown): { functions?: unknown } | null {
  if (typeof abi === 'string') {
    try {
      abi = JSON.parse(abi);
    } catch {
      return null;
    }
  }
  return abi !== null && typeof abi === 'object' ? (abi as { functions?: unknown }) : null;
}

/** The ABI entry of a function, or null when the ABI (object or JSON string) lacks it. */
function findAbiFunction(abi: unknown, functionName: string): ClarityAbiFunction | null {
  const parsed = parseAbi(abi);
  if (!parsed || !Array.isArray(parsed.functions)) return null;
  for (const fn of parsed.functions as ClarityAbiFunction[]) {
    if (fn && fn.name === functionName) return fn;
  }
  return null;
}

/** `(define-public (name (arg type) ...))` as @stacks/transactions' `abiFunctionToString` prints it. */
function abiFunctionToString(fn: ClarityAbiFunction): string {
  const access = fn.access === 'read_only' ? 'read-only' : fn.access;
  const args = (fn.args ?? []).map((a) => `(${a.name} ${abiTypeToString(a.type)})`).join(' ');
  return `(define-${access} (${fn.name} ${args}))`;
}

export interface ContractCallJson {
  contract_id: string;
  function_name: string;
  function_signature: string;
  function_args?: { hex: string; repr: string; name: string; type: string }[];
}

/**
 * The API's contract_call object with the ABI applied (as upstream renders it): signature from the
 * ABI; each argument takes its ABI name and type, arguments beyond the ABI's arity keep `name: ''`
 * and the value-derived type. Without the function in the ABI, the object is returned unchanged.
 */
export function applyAbiToContractCall(call: ContractCallJson, abi: unknown): ContractCallJson {
  const fn = findAbiFunction(abi, call.function_name);
  if (!fn) return call;
  const out: ContractCallJson = {
    contract_id: call.contract_id,
    function_name: call.function_name,
    function_signature: abiFunctionToString(fn),
  };
  if (call.function_args) {
    out.function_args = call.function_args.map((arg, i) => {
      const abiArg = fn.args?.[i];
      return {
        hex: arg.hex,
        repr: arg.repr,
        name: abiArg?.name || '',
        type: abiArg?.type ? abiTypeToString(abiArg.type) : arg.type,
      };
    });
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// A plain object tree of a value, for reading fields of print events and tx results.

export type ClarityTree =
  | { type: 'int' | 'uint'; value: bigint }
  | { type: 'buffer'; value: Buffer }
  | { type: 'bool'; value: boolean }
  | { type: 'principal'; value: string }
  | { type: 'ok' | 'err' | 'some'; value: ClarityTree }
  | { type: 'none' }
  | { type: 'list'; value: ClarityTree[] }
  | { type: 'tuple'; value: Map<string, ClarityTree> }
  | { type: 'string-ascii' | 'string-utf8'; value: string };

function readTree(r: ByteReader, depth: number): ClarityTree {
  if (depth > MAX_DEPTH) throw new Error('Clarity value nested too deeply');
  const prefix = r.u8();
  const buf = r.buf;
  switch (prefix) {
    case Prefix.Int:
    case Prefix.UInt: {
      const p = r.take(16);
      const v = (buf.readBigUInt64BE(p) << 64n) | buf.readBigUInt64BE(p + 8);
      return prefix === Prefix.Int
        ? { type: 'int', value: BigInt.asIntN(128, v) }
        : { type: 'uint', value: v };
    }
    case Prefix.Buffer:
      return { type: 'buffer', value: r.bytes(r.u32()) };
    case Prefix.BoolTrue:
    case Prefix.BoolFalse:
      return { type: 'bool', value: prefix === Prefix.BoolTrue };
    case Prefix.PrincipalStandard:
    case Prefix.PrincipalContract: {
      const version = r.u8();
      const address = c32Address(version, r.bytes(20));
      return {
        type: 'principal',
        value: prefix === Prefix.PrincipalStandard ? address : address + '.' + r.shortString(),
      };
    }
    case Prefix.ResponseOk:
      return { type: 'ok', value: readTree(r, depth + 1) };
    case Prefix.ResponseErr:
      return { type: 'err', value: readTree(r, depth + 1) };
    case Prefix.OptionalSome:
      return { type: 'some', value: readTree(r, depth + 1) };
    case Prefix.OptionalNone:
      return { type: 'none' };
    case Prefix.List: {
      const len = r.u32();
      const items: ClarityTree[] = [];
      for (let i = 0; i < len; i++) items.push(readTree(r, depth + 1));
      return { type: 'list', value: items };
    }
    case Prefix.Tuple: {
      const len = r.u32();
      const fields = new Map<string, ClarityTree>();
      for (let i = 0; i < len; i++) {
        const name = r.shortString();
        fields.set(name, readTree(r, depth + 1));
      }
      return { type: 'tuple', value: fields };
    }
    case Prefix.StringAscii: {
      const b = r.bytes(r.u32());
      return { type: 'string-ascii', value: b.toString('latin1') };
    }
    case Prefix.StringUtf8: {
      const b = r.bytes(r.u32());
      return { type: 'string-utf8', value: b.toString('utf8') };
    }
    default:
      throw new Error(`Bad Clarity type prefix 0x${HEX2[prefix]} at offset ${r.pos - 1}`);
  }
}

/** Decodes a serialized value into a plain tree (ints as bigint, principals as strings, tuples as Maps). */
export function parseClarityValue(input: string | Uint8Array): ClarityTree {
  return readTree(new ByteReader(toBuffer(input)), 0);
}
