// The contracts of the demo chain: a SIP-010-style fungible token and a SIP-009-style NFT collection, with
// the interfaces (ABI) the node reports for them in `/new_block` (`contract_abi`), and the boot PoX
// contract the chain's stackers call.

export const FT_CONTRACT_NAME = 'mango-token';
export const FT_ASSET_NAME = 'mango';
export const NFT_CONTRACT_NAME = 'pixel-punks';
export const NFT_ASSET_NAME = 'pixel-punk';
export const CLARITY_VERSION = 2;

export const BOOT_ADDRESS = 'SP000000000000000000002Q6VF78';
export const POX_CONTRACT = `${BOOT_ADDRESS}.pox-4`;
export const POX_FIRST_BURN_HEIGHT = 666050;
export const POX_CYCLE_LENGTH = 2100;
/** The last burn blocks of each reward cycle, in which the next cycle's reward set is chosen (mainnet PoX). */
export const POX_PREPARE_LENGTH = 100;

export const FT_SOURCE = `;; Mango: a SIP-010 fungible token.
(define-fungible-token mango)

(define-constant contract-owner tx-sender)
(define-constant err-owner-only (err u100))
(define-constant err-not-token-owner (err u101))

(define-data-var token-uri (optional (string-utf8 256)) (some u"https://example.com/mango.json"))

(define-public (transfer (amount uint) (sender principal) (recipient principal) (memo (optional (buff 34))))
  (begin
    (asserts! (is-eq tx-sender sender) err-not-token-owner)
    (try! (ft-transfer? mango amount sender recipient))
    (print { action: "transfer", amount: amount, sender: sender, recipient: recipient })
    (ok true)))

(define-public (mint (amount uint) (recipient principal))
  (begin
    (asserts! (is-eq tx-sender contract-owner) err-owner-only)
    (try! (ft-mint? mango amount recipient))
    (print { action: "mint", amount: amount, recipient: recipient })
    (ok true)))

(define-public (burn (amount uint))
  (begin
    (try! (ft-burn? mango amount tx-sender))
    (print { action: "burn", amount: amount, sender: tx-sender })
    (ok true)))

(define-read-only (get-name) (ok "Mango"))
(define-read-only (get-symbol) (ok "MNGO"))
(define-read-only (get-decimals) (ok u6))
(define-read-only (get-balance (who principal)) (ok (ft-get-balance mango who)))
(define-read-only (get-total-supply) (ok (ft-get-supply mango)))
(define-read-only (get-token-uri) (ok (var-get token-uri)))

(ft-mint? mango u1000000000000000 contract-owner)
`;

export const NFT_SOURCE = `;; Pixel Punks: a SIP-009 NFT collection with a free public mint.
(define-non-fungible-token pixel-punk uint)

(define-constant err-not-token-owner (err u101))

(define-data-var last-token-id uint u0)

(define-read-only (get-last-token-id) (ok (var-get last-token-id)))
(define-read-only (get-token-uri (id uint)) (ok (some "https://example.com/pixel-punks.json")))
(define-read-only (get-owner (id uint)) (ok (nft-get-owner? pixel-punk id)))

(define-public (transfer (id uint) (sender principal) (recipient principal))
  (begin
    (asserts! (is-eq tx-sender sender) err-not-token-owner)
    (nft-transfer? pixel-punk id sender recipient)))

(define-public (mint (recipient principal))
  (let ((id (+ (var-get last-token-id) u1)))
    (try! (nft-mint? pixel-punk id recipient))
    (var-set last-token-id id)
    (print { action: "mint", id: id, recipient: recipient })
    (ok id)))

(define-public (burn (id uint))
  (begin
    (asserts! (is-eq (some tx-sender) (nft-get-owner? pixel-punk id)) err-not-token-owner)
    (nft-burn? pixel-punk id tx-sender)))
`;

const okBoolErrUint = { response: { ok: 'bool', error: 'uint128' } };
const errConstant = { response: { ok: 'none', error: 'uint128' } };
const readOnly = (name: string, args: { name: string; type: unknown }[], ok: unknown) => ({
  name,
  access: 'read_only',
  args,
  outputs: { type: { response: { ok, error: 'none' } } },
});

export const FT_ABI = {
  maps: [],
  epoch: 'Epoch25',
  functions: [
    {
      name: 'burn',
      access: 'public',
      args: [{ name: 'amount', type: 'uint128' }],
      outputs: { type: okBoolErrUint },
    },
    {
      name: 'mint',
      access: 'public',
      args: [
        { name: 'amount', type: 'uint128' },
        { name: 'recipient', type: 'principal' },
      ],
      outputs: { type: okBoolErrUint },
    },
    {
      name: 'transfer',
      access: 'public',
      args: [
        { name: 'amount', type: 'uint128' },
        { name: 'sender', type: 'principal' },
        { name: 'recipient', type: 'principal' },
        { name: 'memo', type: { optional: { buffer: { length: 34 } } } },
      ],
      outputs: { type: okBoolErrUint },
    },
    readOnly('get-balance', [{ name: 'who', type: 'principal' }], 'uint128'),
    readOnly('get-decimals', [], 'uint128'),
    readOnly('get-name', [], { 'string-ascii': { length: 5 } }),
    readOnly('get-symbol', [], { 'string-ascii': { length: 4 } }),
    readOnly('get-token-uri', [], { optional: { 'string-utf8': { length: 256 } } }),
    readOnly('get-total-supply', [], 'uint128'),
  ],
  variables: [
    { name: 'contract-owner', type: 'principal', access: 'constant' },
    { name: 'err-not-token-owner', type: errConstant, access: 'constant' },
    { name: 'err-owner-only', type: errConstant, access: 'constant' },
    { name: 'token-uri', type: { optional: { 'string-utf8': { length: 256 } } }, access: 'variable' },
  ],
  clarity_version: 'Clarity2',
  fungible_tokens: [{ name: FT_ASSET_NAME }],
  non_fungible_tokens: [],
};

export const NFT_ABI = {
  maps: [],
  epoch: 'Epoch25',
  functions: [
    {
      name: 'burn',
      access: 'public',
      args: [{ name: 'id', type: 'uint128' }],
      outputs: { type: okBoolErrUint },
    },
    {
      name: 'mint',
      access: 'public',
      args: [{ name: 'recipient', type: 'principal' }],
      outputs: { type: { response: { ok: 'uint128', error: 'uint128' } } },
    },
    {
      name: 'transfer',
      access: 'public',
      args: [
        { name: 'id', type: 'uint128' },
        { name: 'sender', type: 'principal' },
        { name: 'recipient', type: 'principal' },
      ],
      outputs: { type: okBoolErrUint },
    },
    readOnly('get-last-token-id', [], 'uint128'),
    readOnly('get-owner', [{ name: 'id', type: 'uint128' }], { optional: 'principal' }),
    readOnly('get-token-uri', [{ name: 'id', type: 'uint128' }], {
      optional: { 'string-ascii': { length: 36 } },
    }),
  ],
  variables: [
    { name: 'err-not-token-owner', type: errConstant, access: 'constant' },
    { name: 'last-token-id', type: 'uint128', access: 'variable' },
  ],
  clarity_version: 'Clarity2',
  fungible_tokens: [],
  non_fungible_tokens: [{ name: NFT_ASSET_NAME, type: 'uint128' }],
};

/** The reward cycle a burn height is in (pox-4 `burn-height-to-reward-cycle`). */
export function poxRewardCycle(burnHeight: number): number {
  return Math.floor((burnHeight - POX_FIRST_BURN_HEIGHT) / POX_CYCLE_LENGTH);
}

/** First burn height of the reward cycle after the one containing `burnHeight`, plus `periods` cycles. */
export function poxUnlockHeight(burnHeight: number, periods: number): number {
  return POX_FIRST_BURN_HEIGHT + (poxRewardCycle(burnHeight) + 1 + periods) * POX_CYCLE_LENGTH;
}

/**
 * The first reward cycle a lock made at `burnHeight` counts in, as the node's pox-4 print event reports
 * it (`start-cycle-id`): the next cycle, or the one after when the next cycle's reward set is already being
 * chosen (the prepare phase, whose first block's txs already miss it).
 */
export function poxStartCycle(burnHeight: number): number {
  const inPreparePhase =
    (burnHeight - POX_FIRST_BURN_HEIGHT) % POX_CYCLE_LENGTH >= POX_CYCLE_LENGTH - POX_PREPARE_LENGTH;
  return poxRewardCycle(burnHeight) + 1 + (inPreparePhase ? 1 : 0);
}
