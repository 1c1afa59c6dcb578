import type { TxDraft } from './drafts.js';
import type { Random } from './random.js';
import type { Ledger } from './ledger.js';

// What users send. Until the token and NFT contracts are deployed and mined, only STX transfers; then each
// kind of EARLY_KINDS once, so even a short chain shows them all; then a weighted mix (MIX). Each tx is
// drafted by the ledger, which applies it at once (txs are drafted in the order they are mined).

type UserKind =
  | 'stx'
  | 'sponsored'
  | 'memo'
  | 'ft_transfer'
  | 'ft_fail'
  | 'ft_mint'
  | 'ft_burn'
  | 'nft_mint'
  | 'nft_transfer'
  | 'nft_fail'
  | 'nft_burn'
  | 'stack_stx'
  | 'deploy';

/** What every chain shows at least once, early on, however short it is. */
const EARLY_KINDS: UserKind[] = [
  'stack_stx',
  'sponsored',
  'memo',
  'ft_mint',
  'nft_mint',
  'ft_transfer',
  'ft_fail',
  'nft_mint',
  'nft_transfer',
  'nft_fail',
  'ft_burn',
  'nft_burn',
];

/** The mix after the early kinds: a uniform draw below `below` (and above the row before) picks `kind`. */
const MIX: { below: number; kind: UserKind }[] = [
  { below: 0.45, kind: 'stx' },
  { below: 0.62, kind: 'ft_transfer' },
  { below: 0.635, kind: 'ft_fail' },
  { below: 0.655, kind: 'ft_mint' },
  { below: 0.675, kind: 'ft_burn' },
  { below: 0.775, kind: 'nft_mint' },
  { below: 0.875, kind: 'nft_transfer' },
  { below: 0.885, kind: 'nft_fail' },
  { below: 0.905, kind: 'nft_burn' },
  { below: 0.908, kind: 'stack_stx' },
  { below: 0.909, kind: 'deploy' },
];

/** The early stack-stx locks user 1's STX (rich: the genesis gives low indexes the most), not user 0's. */
const EARLY_STACKER = 1;

export class TxMix {
  private readonly earlyKinds = [...EARLY_KINDS];
  /** the contract deploys whose mining makes the contracts callable */
  private deploys: TxDraft[] = [];

  constructor(
    private readonly ledger: Ledger,
    private readonly random: Random,
  ) {}

  /** The token and NFT contracts every contract call uses. */
  deployContracts(): TxDraft[] {
    this.deploys = [this.ledger.deploy('ft'), this.ledger.deploy('nft')];
    return this.deploys;
  }

  /** Txs mined on the canonical chain: the contracts are callable once both deploys are. */
  mined(txs: TxDraft[]) {
    if (this.ledger.contractsLive || this.deploys.length === 0) return;
    this.deploys = this.deploys.filter((d) => !txs.includes(d));
    if (this.deploys.length === 0) this.ledger.contractsLive = true;
  }

  /** A user's next tx (null when the one drawn cannot be made: then nothing is sent). */
  next(burnHeight: number): TxDraft | null {
    let kind: UserKind = 'stx';
    let early = false;
    if (this.ledger.contractsLive && this.earlyKinds.length > 0) {
      kind = this.earlyKinds.shift()!;
      early = true;
    } else if (this.ledger.contractsLive) {
      const r = this.random.float();
      kind = MIX.find((row) => r < row.below)?.kind ?? 'stx';
    }
    const tx = this.draft(kind, burnHeight, early);
    return tx ?? this.ledger.stxTransfer(burnHeight);
  }

  private draft(kind: UserKind, burnHeight: number, early: boolean): TxDraft | null {
    const l = this.ledger;
    switch (kind) {
      case 'stx':
        return l.stxTransfer(burnHeight);
      case 'sponsored':
        return l.stxTransfer(burnHeight, { sponsored: true });
      case 'memo':
        return l.stxTransfer(burnHeight, { memo: true, sponsored: false });
      case 'ft_transfer':
        return l.ftTransfer(burnHeight);
      case 'ft_fail':
        return l.ftTransfer(burnHeight, true);
      case 'ft_mint':
        return l.ftMint(burnHeight);
      case 'ft_burn':
        return l.ftBurn(burnHeight);
      case 'nft_mint':
        return l.nftMint(burnHeight);
      case 'nft_transfer':
        return l.nftTransfer(burnHeight);
      case 'nft_fail':
        return l.nftTransfer(burnHeight, true);
      case 'nft_burn':
        return l.nftBurn(burnHeight);
      case 'stack_stx':
        return l.stackStx(burnHeight, early ? EARLY_STACKER : undefined);
      case 'deploy':
        return l.deploy(this.random.chance(0.5) ? 'ft' : 'nft');
    }
  }
}
