// Stacks address and principal validation, and address construction from raw parts.
import { c32AddressDecode } from './c32.js';

/** Address versions of single-sig (P2PKH/P2WPKH) and multi-sig (P2SH/P2WSH) hash modes. */
const AddressVersion = {
  MainnetSingleSig: 22, // 'SP'
  MainnetMultiSig: 20, // 'SM'
  TestnetSingleSig: 26, // 'ST'
  TestnetMultiSig: 21, // 'SN'
} as const;

export const BOOT_ADDRESS_MAINNET = 'SP000000000000000000002Q6VF78';
export const BOOT_ADDRESS_TESTNET = 'ST000000000000000000002AMW42H';

const CONTRACT_NAME_RE = /^[a-zA-Z]([a-zA-Z0-9]|[-_])*$/;

/**
 * A c32check-valid Stacks address with any version byte, with the reference codec's rules
 * (`isValidStacksAddress`): checksum verified, 20-byte hash, lenient alphabet (lowercase, O/L/I
 * accepted), first character not inspected. Route schemas upstream add an uppercase-c32 pattern first.
 */
export function isValidStacksAddress(s: string): boolean {
  return typeof s === 'string' && c32AddressDecode(s) !== null;
}

/** A contract name as accepted in principals: `^[a-zA-Z]([a-zA-Z0-9]|[-_])*$`, 1–128 characters. */
export function isValidContractName(name: string): boolean {
  return name.length >= 1 && name.length <= 128 && CONTRACT_NAME_RE.test(name);
}

/** `<valid address>.<contract name>` (exactly one dot). */
export function isValidContractId(s: string): boolean {
  if (typeof s !== 'string') return false;
  const dot = s.indexOf('.');
  if (dot < 0 || s.indexOf('.', dot + 1) >= 0) return false;
  return isValidStacksAddress(s.slice(0, dot)) && isValidContractName(s.slice(dot + 1));
}

/** A standard principal (address) or a contract principal (`address.name`). */
export function isValidPrincipal(s: string): boolean {
  if (typeof s !== 'string') return false;
  return s.includes('.') ? isValidContractId(s) : isValidStacksAddress(s);
}

/** Address version for a spending-condition hash mode (0 P2PKH, 1 P2SH, 2 P2WPKH, 3 P2WSH, 5/7 non-sequential multisig). */
export function addressVersionForHashMode(hashMode: number, mainnet: boolean): number {
  switch (hashMode) {
    case 0x00: // P2PKH
      return mainnet ? AddressVersion.MainnetSingleSig : AddressVersion.TestnetSingleSig;
    case 0x01: // P2SH
    case 0x02: // P2WPKH (P2SH-wrapped segwit)
    case 0x03: // P2WSH (P2SH-wrapped segwit)
    case 0x05: // P2SH non-sequential
    case 0x07: // P2WSH non-sequential
      return mainnet ? AddressVersion.MainnetMultiSig : AddressVersion.TestnetMultiSig;
    default:
      throw new Error(`Unknown address hash mode ${hashMode}`);
  }
}

/** Address and (optional) contract name of a principal string; throws when invalid. */
export function parsePrincipal(principal: string): {
  address: string;
  version: number;
  hash160: Uint8Array;
  contractName: string | null;
} {
  const dot = principal.indexOf('.');
  const address = dot < 0 ? principal : principal.slice(0, dot);
  const contractName = dot < 0 ? null : principal.slice(dot + 1);
  const decoded = c32AddressDecode(address);
  if (decoded === null) throw new Error(`Invalid Stacks address "${address}"`);
  if (contractName !== null && !isValidContractName(contractName)) {
    throw new Error(`Invalid contract name "${contractName}"`);
  }
  return { address, version: decoded.version, hash160: decoded.hash160, contractName };
}
