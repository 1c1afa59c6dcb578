import {
  BOOT_ADDRESS,
  CLARITY_VERSION,
  FT_ABI,
  FT_ASSET_NAME,
  FT_CONTRACT_NAME,
  FT_SOURCE,
  NFT_ABI,
  NFT_ASSET_NAME,
  NFT_CONTRACT_NAME,
  NFT_SOURCE,
  POX_CONTRACT,
  poxRewardCycle,
  poxStartCycle,
  poxUnlockHeight,
} from './contracts.js';
import { newDraft, type EventDraft, type ExecutionCost, type TxDraft, type TxKind } from './drafts.js';
import { KeyRing, MAINNET_P2PKH, type Account } from './keys.js';
import { Zipf, derivedBytes, type Random } from './random.js';
import { sha512_256, signTx, type KeyMaterial } from './signer.js';
import { vrfProve } from './vrf.js';
import {
  AnchorMode,
  PostConditionMode,
  bufferCV,
  coinbasePayload,
  contractCallPayload,
  contractPrincipalCV,
  cvHex,
  encodeClearedTx,
  errCV,
  ftSentEqualPostCondition,
  nakamotoCoinbasePayload,
  nftSentPostCondition,
  noneCV,
  okCV,
  smartContractPayload,
  someCV,
  standardPrincipalCV,
  stringAsciiCV,
  tenureChangePayload,
  tokenTransferPayload,
  trueCV,
  tupleCV,
  uintCV,
  type AssetInfo,
  type CV,
  type TenureChange,
} from './wire.js';

// The ledger the generator keeps so that every transaction it emits is one the chain would accept and
// every event is what the contracts would emit: STX balances (with locks), nonces, token balances and NFT
// owners. Transactions are drafted in the order they will be mined, and their effects applied at once.

/** A draft whose bytes are encoded and signed later, by `seal`. */
export interface SealedLater {
  draft: TxDraft;
  seal: (previousTenureEnd: Buffer) => void;
}

const OK_TRUE = cvHex(okCV(trueCV));
const ERR_U1 = cvHex(errCV(uintCV(1)));
const STX = 1_000_000n;
const NO_MEMO = Buffer.alloc(34);
const MEMOS = ['invoice 1042', 'rent', 'thanks!', 'coffee', 'gm', 'payout', 'refund #77', 'swap'];

interface Contract {
  version: number;
  hash160: Buffer;
  name: string;
  id: string;
  principal: CV;
  asset: AssetInfo;
  assetIdentifier: string;
}

function cost(runtime: number, reads: number, writes: number, random: Random): ExecutionCost {
  const jitter = () => 0.8 + random.float() * 0.4;
  return {
    read_count: Math.round(reads * jitter()),
    read_length: Math.round(reads * 600 * jitter()),
    runtime: Math.round(runtime * jitter()),
    write_count: Math.round(writes * jitter()),
    write_length: Math.round(writes * 90 * jitter()),
  };
}

/**
 * The print event the node synthesises for a successful pox-4 `stack-stx` (stacks-core
 * pox-locking/src/events.rs): evaluated after the fee is paid but before the lock is applied, so `balance` is
 * the unlocked balance then and `locked` / `burnchain-unlock-height` the stacker's lock before this one (none:
 * stack-stx is only drafted once an earlier lock has ended); `stacker` is the bare principal, and `data` holds
 * the call's arguments and the cycles they span, nothing else.
 */
function stackStxPrint(call: {
  balance: bigint;
  stacker: CV;
  poxAddr: CV;
  signerKey: CV;
  amount: bigint;
  maxAmount: bigint;
  period: number;
  authId: bigint;
  burnHeight: number;
  unlock: number;
}): CV {
  return okCV(
    tupleCV({
      balance: uintCV(call.balance),
      'burnchain-unlock-height': uintCV(0),
      data: tupleCV({
        'auth-id': uintCV(call.authId),
        'end-cycle-id': someCV(uintCV(poxRewardCycle(call.unlock))),
        'lock-amount': uintCV(call.amount),
        'lock-period': uintCV(call.period),
        'max-amount': uintCV(call.maxAmount),
        'pox-addr': call.poxAddr,
        'signer-key': call.signerKey,
        'signer-sig': noneCV,
        'start-burn-height': uintCV(call.burnHeight),
        'start-cycle-id': uintCV(poxStartCycle(call.burnHeight)),
        'unlock-burn-height': uintCV(call.unlock),
      }),
      locked: uintCV(0),
      name: stringAsciiCV('stack-stx'),
      stacker: call.stacker,
    }),
  );
}

export class Ledger {
  readonly keys: KeyRing;
  private readonly keyMaterial: KeyMaterial;
  readonly users: Account[] = [];
  readonly miners: Account[] = [];
  /** the account paying for sponsored transactions */
  readonly sponsor: number;
  readonly stx: bigint[] = [];
  readonly locked: bigint[] = [];
  readonly unlockBurnHeight: number[] = [];
  readonly nonce: number[] = [];
  readonly ft: bigint[] = [];
  private readonly minerNonce: number[] = [];
  /** live NFTs: id and owner (user index), unordered */
  private readonly nftIds: number[] = [];
  private readonly nftOwners: number[] = [];
  private lastNftId = 0;
  private readonly zipf: Zipf;
  private deploys = 0;
  token: Contract | null = null;
  collection: Contract | null = null;
  /** contracts become callable once their deploy is mined */
  contractsLive = false;

  constructor(
    private readonly seed: string,
    accountCount: number,
    minerCount: number,
    private readonly random: Random,
  ) {
    this.keys = new KeyRing(seed);
    for (let i = 0; i < accountCount; i++) {
      this.users.push(this.keys.add(`account:${i}`));
      this.stx.push(0n);
      this.locked.push(0n);
      this.unlockBurnHeight.push(0);
      this.nonce.push(0);
      this.ft.push(0n);
    }
    for (let i = 0; i < minerCount; i++) {
      this.miners.push(this.keys.add(`miner:${i}`));
      this.minerNonce.push(0);
    }
    this.keyMaterial = this.keys.material();
    this.sponsor = Math.min(3, accountCount - 1);
    this.zipf = new Zipf(accountCount, 1.1);
  }

  /** A user drawn with Zipf-like skew: low indexes are the busy principals. */
  busy(): number {
    return this.zipf.draw(this.random);
  }

  /** Someone other than `not` (Zipf-skewed half of the time, uniform otherwise). */
  other(not: number): number {
    for (let attempt = 0; attempt < 8; attempt++) {
      const i = this.random.chance(0.5) ? this.busy() : this.random.int(0, this.users.length - 1);
      if (i !== not) return i;
    }
    return (not + 1) % this.users.length;
  }

  spendable(i: number, burnHeight: number): bigint {
    return this.stx[i] - (burnHeight < this.unlockBurnHeight[i] ? this.locked[i] : 0n);
  }

  private charge(payer: number, fee: number) {
    this.stx[payer] -= BigInt(fee);
  }

  private signed(
    kind: TxKind,
    origin: number,
    sponsor: number,
    fee: number,
    payload: Buffer,
    options: {
      anchorMode?: AnchorMode;
      postConditionMode?: PostConditionMode;
      postConditions?: Buffer[];
      status?: 'success' | 'abort_by_response';
      rawResult?: string;
      events?: EventDraft[];
      contractAbi?: object | null;
      cost: ExecutionCost;
    },
  ): TxDraft {
    const account = this.users[origin];
    const nonce = this.nonce[origin]++;
    let sponsorNonce = 0;
    if (sponsor >= 0) sponsorNonce = this.nonce[sponsor]++;
    this.charge(sponsor >= 0 ? sponsor : origin, fee);
    return newDraft({
      kind,
      request: {
        cleared: encodeClearedTx({
          originSigner: account.hash160,
          sponsored: sponsor >= 0,
          anchorMode: options.anchorMode ?? AnchorMode.Any,
          postConditionMode: options.postConditionMode ?? PostConditionMode.Allow,
          postConditions: options.postConditions ?? [],
          payload,
        }),
        origin: account.key,
        nonce,
        fee: sponsor >= 0 ? 0 : fee,
        sponsor: sponsor >= 0 ? this.users[sponsor].key : -1,
        sponsorNonce,
        sponsorFee: sponsor >= 0 ? fee : 0,
      },
      senderAddress: account.address,
      ...(sponsor >= 0 ? { sponsorAddress: this.users[sponsor].address } : {}),
      nonce,
      fee,
      status: options.status ?? 'success',
      rawResult: options.rawResult ?? OK_TRUE,
      events: options.status === 'abort_by_response' ? [] : (options.events ?? []),
      contractAbi: options.contractAbi ?? null,
      cost: options.cost,
    });
  }

  // ---- chain transactions ----------------------------------------------------------------------------

  /**
   * Block 1's genesis transaction: like mainnet's, an unsigned boot-address transfer carrying the genesis
   * STX mints (one per account, the busy ones richest).
   */
  genesis(): TxDraft {
    const raw = Buffer.concat([
      Buffer.from('000000000104', 'hex'),
      Buffer.alloc(1 + 20 + 8 + 8 + 1 + 65),
      Buffer.from('030200000000', 'hex'),
      tokenTransferPayload(
        standardPrincipalCV(MAINNET_P2PKH, Buffer.alloc(20)),
        0n,
        this.memo(`genesis ${this.seed}`),
      ),
    ]);
    const events: EventDraft[] = this.users.map((user, i) => {
      const amount = (50_000_000n * STX) / BigInt(i + 1) + 100_000n * STX;
      this.stx[i] += amount;
      return { type: 'stx_mint_event', body: { recipient: user.address, amount: amount.toString() } };
    });
    const draft = newDraft({
      kind: 'genesis',
      request: null,
      senderAddress: BOOT_ADDRESS,
      nonce: 0,
      fee: 0,
      status: 'success',
      rawResult: OK_TRUE,
      events,
      contractAbi: null,
      cost: { read_count: 0, read_length: 0, runtime: 0, write_count: 0, write_length: 0 },
    });
    draft.rawTx = '0x' + raw.toString('hex');
    draft.txid = '0x' + sha512_256(raw).toString('hex');
    return draft;
  }

  /** A miner's coinbase; `commit: false` drafts one without consuming the nonce (a block to be orphaned). */
  coinbase(miner: number, label: string, commit = true): TxDraft {
    return this.minerTx(
      miner,
      'coinbase',
      coinbasePayload(derivedBytes(this.seed, `coinbase:${label}`)),
      commit,
    );
  }

  /**
   * The coinbase that opens a Nakamoto tenure: its VRF proof over the sortition hash of the burn block that
   * elected the miner, proven with the miner's VRF key; the reward may go to another principal.
   */
  nakamotoCoinbase(miner: number, label: string, sortitionHash: Buffer, altRecipient: CV | null): TxDraft {
    const proof = vrfProve(this.vrfKey(miner), sortitionHash);
    const payload = nakamotoCoinbasePayload(
      derivedBytes(this.seed, `coinbase:${label}`),
      altRecipient,
      proof,
    );
    return this.minerTx(miner, 'nakamoto_coinbase', payload, true);
  }

  /** A miner's VRF secret key (Ed25519), registered on the burnchain before it mines. */
  vrfKey(miner: number): Buffer {
    return derivedBytes(this.seed, `vrf:${miner}`);
  }

  /**
   * A tenure change by the miner. It names the block before it (`previousTenureEnd`), known once that block
   * is built: `seal` encodes and signs it then. The nonce is taken now, in mining order.
   */
  tenureChange(miner: number, change: Omit<TenureChange, 'previousTenureEnd' | 'pubkeyHash'>): SealedLater {
    const account = this.miners[miner];
    const draft = this.minerTx(miner, 'tenure_change', Buffer.alloc(0), true);
    const request = draft.request!;
    draft.request = null;
    return {
      draft,
      seal: (previousTenureEnd: Buffer) => {
        const payload = tenureChangePayload({ ...change, previousTenureEnd, pubkeyHash: account.hash160 });
        const signed = signTx(
          { ...request, cleared: this.clearedMinerTx(account, payload) },
          this.keyMaterial,
        );
        draft.txid = '0x' + signed.txid.toString('hex');
        draft.rawTx = '0x' + signed.raw.toString('hex');
      },
    };
  }

  private clearedMinerTx(account: Account, payload: Buffer): Buffer {
    return encodeClearedTx({
      originSigner: account.hash160,
      sponsored: false,
      anchorMode: AnchorMode.OnChainOnly,
      postConditionMode: PostConditionMode.Deny,
      postConditions: [],
      payload,
    });
  }

  /** A fee-less miner transaction (coinbase, tenure change): on-chain only, deny mode, no events. */
  private minerTx(miner: number, kind: TxKind, payload: Buffer, commit: boolean): TxDraft {
    const account = this.miners[miner];
    const nonce = this.minerNonce[miner];
    if (commit) this.minerNonce[miner]++;
    return newDraft({
      kind,
      request: {
        cleared: this.clearedMinerTx(account, payload),
        origin: account.key,
        nonce,
        fee: 0,
        sponsor: -1,
        sponsorNonce: 0,
        sponsorFee: 0,
      },
      senderAddress: account.address,
      nonce,
      fee: 0,
      status: 'success',
      rawResult: OK_TRUE,
      events: [],
      contractAbi: null,
      cost: { read_count: 0, read_length: 0, runtime: 0, write_count: 0, write_length: 0 },
    });
  }

  private memo(text: string): Buffer {
    const memo = Buffer.alloc(34);
    memo.write(text.slice(0, 34), 'utf8');
    return memo;
  }

  stxTransfer(
    burnHeight: number,
    options: { sponsored?: boolean; memo?: boolean; anchorMode?: AnchorMode } = {},
  ): TxDraft | null {
    for (let attempt = 0; attempt < 6; attempt++) {
      const from = this.busy();
      const sponsored = (options.sponsored ?? this.random.chance(0.08)) && from !== this.sponsor;
      const payer = sponsored ? this.sponsor : from;
      const fee = this.random.int(180, 3000);
      const room = this.spendable(from, burnHeight) - (sponsored ? 0n : BigInt(fee));
      if (room < 2000n || this.spendable(payer, burnHeight) < BigInt(fee) + 1000n) continue;
      let amount = this.random.logUniform(1_000, 10_000_000_000);
      if (amount > room / 2n) amount = room / 2n;
      const to = this.other(from);
      const memo =
        (options.memo ?? this.random.chance(0.3)) ? this.memo(`${this.random.pick(MEMOS)}`) : NO_MEMO;
      this.stx[from] -= amount;
      this.stx[to] += amount;
      return this.signed(
        'stx_transfer',
        from,
        sponsored ? this.sponsor : -1,
        fee,
        tokenTransferPayload(this.users[to].principal, amount, memo),
        {
          anchorMode: options.anchorMode,
          events: [
            {
              type: 'stx_transfer_event',
              body: {
                sender: this.users[from].address,
                recipient: this.users[to].address,
                amount: amount.toString(),
                memo: memo.toString('hex'),
              },
            },
          ],
          cost: cost(0, 0, 0, this.random),
        },
      );
    }
    return null;
  }

  private contract(deployer: number, name: string, assetName: string): Contract {
    const account = this.users[deployer];
    const id = `${account.address}.${name}`;
    return {
      version: MAINNET_P2PKH,
      hash160: account.hash160,
      name,
      id,
      principal: contractPrincipalCV(MAINNET_P2PKH, account.hash160, name),
      asset: { version: MAINNET_P2PKH, hash160: account.hash160, contractName: name, assetName },
      assetIdentifier: `${id}::${assetName}`,
    };
  }

  /** The token and NFT contracts everyone uses (the first deploys), or later copies nobody calls. */
  deploy(kind: 'ft' | 'nft'): TxDraft {
    const deployer = kind === 'ft' ? Math.min(4, this.users.length - 1) : Math.min(5, this.users.length - 1);
    const first = kind === 'ft' ? this.token === null : this.collection === null;
    const baseName = kind === 'ft' ? FT_CONTRACT_NAME : NFT_CONTRACT_NAME;
    const name = first ? baseName : `${baseName}-v${++this.deploys + 1}`;
    const from = first ? deployer : this.busy();
    const contract = this.contract(from, name, kind === 'ft' ? FT_ASSET_NAME : NFT_ASSET_NAME);
    const events: EventDraft[] = [];
    if (kind === 'ft') {
      // the contract mints its supply to the deployer at deploy time
      const supply = 1_000_000_000_000_000n;
      events.push({
        type: 'ft_mint_event',
        body: {
          asset_identifier: contract.assetIdentifier,
          recipient: this.users[from].address,
          amount: supply.toString(),
        },
      });
      if (first) this.ft[from] += supply;
    }
    if (first && kind === 'ft') this.token = contract;
    if (first && kind === 'nft') this.collection = contract;
    return this.signed(
      'contract_deploy',
      from,
      -1,
      this.random.int(50_000, 250_000),
      smartContractPayload(name, kind === 'ft' ? FT_SOURCE : NFT_SOURCE, CLARITY_VERSION),
      {
        events,
        contractAbi: kind === 'ft' ? FT_ABI : NFT_ABI,
        cost: cost(2_500_000, 10, 8, this.random),
      },
    );
  }

  private print(contract: Contract, value: CV): EventDraft {
    return {
      type: 'contract_event',
      body: { contract_identifier: contract.id, topic: 'print', raw_value: cvHex(value) },
    };
  }

  private callFee(): number {
    return this.random.int(1_000, 20_000);
  }

  private canPay(i: number, burnHeight: number, fee: number): boolean {
    return this.spendable(i, burnHeight) >= BigInt(fee);
  }

  /** An FT transfer; `fail` makes the sender try to move more than it holds: `(err u1)`, no events. */
  ftTransfer(burnHeight: number, fail = false): TxDraft | null {
    const token = this.token!;
    for (let attempt = 0; attempt < 6; attempt++) {
      const from = this.busy();
      const fee = this.callFee();
      if (!this.canPay(from, burnHeight, fee)) continue;
      if (!fail && this.ft[from] === 0n) continue;
      const to = this.other(from);
      const amount = fail
        ? this.ft[from] + this.random.logUniform(1, 1_000_000_000)
        : 1n + (this.ft[from] * BigInt(this.random.int(1, 400))) / 1000n;
      const withMemo = this.random.chance(0.2);
      const args = [
        uintCV(amount),
        this.users[from].principal,
        this.users[to].principal,
        withMemo ? someCV(bufferCV(this.memo(this.random.pick(MEMOS)).subarray(0, 12))) : noneCV,
      ];
      const deny = this.random.chance(0.5);
      if (!fail) {
        this.ft[from] -= amount;
        this.ft[to] += amount;
      }
      const sender = this.users[from].address;
      const recipient = this.users[to].address;
      return this.signed('ft_transfer', from, -1, fee, contractCallPayload(token, 'transfer', args), {
        postConditionMode: deny ? PostConditionMode.Deny : PostConditionMode.Allow,
        postConditions: deny
          ? [
              ftSentEqualPostCondition(
                { version: MAINNET_P2PKH, hash160: this.users[from].hash160 },
                token.asset,
                amount,
              ),
            ]
          : [],
        status: fail ? 'abort_by_response' : 'success',
        rawResult: fail ? ERR_U1 : OK_TRUE,
        events: [
          {
            type: 'ft_transfer_event',
            body: { asset_identifier: token.assetIdentifier, sender, recipient, amount: amount.toString() },
          },
          this.print(
            token,
            tupleCV({
              action: stringAsciiCV('transfer'),
              amount: uintCV(amount),
              sender: this.users[from].principal,
              recipient: this.users[to].principal,
            }),
          ),
        ],
        cost: cost(220_000, 6, 3, this.random),
      });
    }
    return null;
  }

  /** The token owner mints to someone. */
  ftMint(burnHeight: number): TxDraft | null {
    const token = this.token!;
    const owner = Math.min(4, this.users.length - 1);
    const fee = this.callFee();
    if (!this.canPay(owner, burnHeight, fee)) return null;
    const to = this.other(owner);
    const amount = this.random.logUniform(1_000_000, 100_000_000_000);
    this.ft[to] += amount;
    return this.signed(
      'ft_mint',
      owner,
      -1,
      fee,
      contractCallPayload(token, 'mint', [uintCV(amount), this.users[to].principal]),
      {
        events: [
          {
            type: 'ft_mint_event',
            body: {
              asset_identifier: token.assetIdentifier,
              recipient: this.users[to].address,
              amount: amount.toString(),
            },
          },
          this.print(
            token,
            tupleCV({
              action: stringAsciiCV('mint'),
              amount: uintCV(amount),
              recipient: this.users[to].principal,
            }),
          ),
        ],
        cost: cost(200_000, 5, 3, this.random),
      },
    );
  }

  ftBurn(burnHeight: number): TxDraft | null {
    const token = this.token!;
    for (let attempt = 0; attempt < 6; attempt++) {
      const from = this.busy();
      const fee = this.callFee();
      if (this.ft[from] === 0n || !this.canPay(from, burnHeight, fee)) continue;
      const amount = 1n + (this.ft[from] * BigInt(this.random.int(1, 100))) / 1000n;
      this.ft[from] -= amount;
      return this.signed('ft_burn', from, -1, fee, contractCallPayload(token, 'burn', [uintCV(amount)]), {
        events: [
          {
            type: 'ft_burn_event',
            body: {
              asset_identifier: token.assetIdentifier,
              sender: this.users[from].address,
              amount: amount.toString(),
            },
          },
          this.print(
            token,
            tupleCV({
              action: stringAsciiCV('burn'),
              amount: uintCV(amount),
              sender: this.users[from].principal,
            }),
          ),
        ],
        cost: cost(190_000, 5, 2, this.random),
      });
    }
    return null;
  }

  /** Free public mint; the live set is capped so memory stays bounded on long chains. */
  nftMint(burnHeight: number): TxDraft | null {
    const nft = this.collection!;
    if (this.nftIds.length >= 4 * this.users.length + 100) return this.nftTransfer(burnHeight);
    const to = this.busy();
    const fee = this.callFee();
    if (!this.canPay(to, burnHeight, fee)) return null;
    const id = ++this.lastNftId;
    this.nftIds.push(id);
    this.nftOwners.push(to);
    return this.signed(
      'nft_mint',
      to,
      -1,
      fee,
      contractCallPayload(nft, 'mint', [this.users[to].principal]),
      {
        rawResult: cvHex(okCV(uintCV(id))),
        events: [
          {
            type: 'nft_mint_event',
            body: {
              asset_identifier: nft.assetIdentifier,
              recipient: this.users[to].address,
              raw_value: cvHex(uintCV(id)),
            },
          },
          this.print(
            nft,
            tupleCV({ action: stringAsciiCV('mint'), id: uintCV(id), recipient: this.users[to].principal }),
          ),
        ],
        cost: cost(260_000, 7, 4, this.random),
      },
    );
  }

  /**
   * The owner of a random NFT sends it on; `fail` has someone else try to send it (`(err u1)` from
   * nft-transfer?, no events).
   */
  nftTransfer(burnHeight: number, fail = false): TxDraft | null {
    const nft = this.collection!;
    if (this.nftIds.length === 0) return fail ? null : this.nftMint(burnHeight);
    const slot = this.random.int(0, this.nftIds.length - 1);
    const id = this.nftIds[slot];
    const owner = this.nftOwners[slot];
    const from = fail ? this.other(owner) : owner;
    const fee = this.callFee();
    if (!this.canPay(from, burnHeight, fee)) return null;
    const to = this.other(from);
    if (!fail) this.nftOwners[slot] = to;
    const deny = !fail && this.random.chance(0.5);
    return this.signed(
      'nft_transfer',
      from,
      -1,
      fee,
      contractCallPayload(nft, 'transfer', [
        uintCV(id),
        this.users[from].principal,
        this.users[to].principal,
      ]),
      {
        postConditionMode: deny ? PostConditionMode.Deny : PostConditionMode.Allow,
        postConditions: deny
          ? [
              nftSentPostCondition(
                { version: MAINNET_P2PKH, hash160: this.users[from].hash160 },
                nft.asset,
                uintCV(id),
              ),
            ]
          : [],
        status: fail ? 'abort_by_response' : 'success',
        rawResult: fail ? ERR_U1 : OK_TRUE,
        events: [
          {
            type: 'nft_transfer_event',
            body: {
              asset_identifier: nft.assetIdentifier,
              sender: this.users[from].address,
              recipient: this.users[to].address,
              raw_value: cvHex(uintCV(id)),
            },
          },
        ],
        cost: cost(240_000, 6, 3, this.random),
      },
    );
  }

  nftBurn(burnHeight: number): TxDraft | null {
    const nft = this.collection!;
    if (this.nftIds.length === 0) return null;
    const slot = this.random.int(0, this.nftIds.length - 1);
    const id = this.nftIds[slot];
    const owner = this.nftOwners[slot];
    const fee = this.callFee();
    if (!this.canPay(owner, burnHeight, fee)) return null;
    const last = this.nftIds.length - 1;
    this.nftIds[slot] = this.nftIds[last];
    this.nftOwners[slot] = this.nftOwners[last];
    this.nftIds.pop();
    this.nftOwners.pop();
    return this.signed('nft_burn', owner, -1, fee, contractCallPayload(nft, 'burn', [uintCV(id)]), {
      events: [
        {
          type: 'nft_burn_event',
          body: {
            asset_identifier: nft.assetIdentifier,
            sender: this.users[owner].address,
            raw_value: cvHex(uintCV(id)),
          },
        },
      ],
      cost: cost(230_000, 6, 3, this.random),
    });
  }

  /** pox-4 `stack-stx`: locks part of a rich account's balance for 1-12 reward cycles. */
  stackStx(burnHeight: number, who?: number): TxDraft | null {
    for (let attempt = 0; attempt < 6; attempt++) {
      const from = who ?? this.busy();
      const fee = this.callFee();
      const free = this.spendable(from, burnHeight) - BigInt(fee);
      if (burnHeight < this.unlockBurnHeight[from] || free < 1_000n * STX) continue;
      const amount = (free * BigInt(this.random.int(50, 90))) / 100n;
      const period = this.random.int(1, 12);
      const unlock = poxUnlockHeight(burnHeight, period);
      this.locked[from] = amount;
      this.unlockBurnHeight[from] = unlock;
      const user = this.users[from];
      const signerKey = bufferCV(
        Buffer.concat([Buffer.from([0x02]), derivedBytes(this.seed, `signer:${from}`)]),
      );
      const poxAddr = tupleCV({ version: bufferCV(Buffer.from([0x00])), hashbytes: bufferCV(user.hash160) });
      const maxAmount = amount + 1_000n * STX;
      const authId = BigInt(this.random.int(1, 1_000_000));
      const boot = { version: MAINNET_P2PKH, hash160: Buffer.alloc(20), name: POX_CONTRACT.split('.')[1] };
      const result = okCV(
        tupleCV({
          'lock-amount': uintCV(amount),
          'signer-key': signerKey,
          stacker: user.principal,
          'unlock-burn-height': uintCV(unlock),
        }),
      );
      const print = stackStxPrint({
        balance: this.stx[from] - BigInt(fee),
        stacker: user.principal,
        poxAddr,
        signerKey,
        amount,
        maxAmount,
        period,
        authId,
        burnHeight,
        unlock,
      });
      return this.signed(
        'stack_stx',
        from,
        -1,
        fee,
        contractCallPayload(boot, 'stack-stx', [
          uintCV(amount),
          poxAddr,
          uintCV(burnHeight),
          uintCV(period),
          noneCV,
          signerKey,
          uintCV(maxAmount),
          uintCV(authId),
        ]),
        {
          rawResult: cvHex(result),
          events: [
            {
              type: 'contract_event',
              body: { contract_identifier: POX_CONTRACT, topic: 'print', raw_value: cvHex(print) },
            },
            {
              type: 'stx_lock_event',
              body: {
                locked_amount: amount.toString(),
                unlock_height: String(unlock),
                locked_address: user.address,
                contract_identifier: POX_CONTRACT,
              },
            },
          ],
          cost: cost(9_000_000, 40, 12, this.random),
        },
      );
    }
    return null;
  }

  /**
   * A transfer that will wait in the mempool for good: its nonce is a few ahead of the sender's next one
   * (a gap nothing fills while it waits). Not applied to the ledger.
   */
  stuckTransfer(): TxDraft {
    const from = this.random.int(0, this.users.length - 1);
    const to = this.other(from);
    const nonce = this.nonce[from] + this.random.int(3, 6);
    const fee = this.random.int(180, 1000);
    const amount = this.random.logUniform(1_000, 1_000_000_000);
    return this.unapplied(
      'stx_transfer',
      from,
      nonce,
      fee,
      tokenTransferPayload(this.users[to].principal, amount, NO_MEMO),
    );
  }

  /**
   * The low-fee first version of a transfer that `replacement` (same sender and nonce, higher fee) replaces
   * by fee before anything is mined. Not applied to the ledger.
   */
  replacedVersion(replacement: TxDraft): TxDraft {
    const from = this.users.findIndex((u) => u.address === replacement.senderAddress);
    const to = this.other(from);
    const fee = Math.max(1, Math.floor(replacement.fee / 2));
    return this.unapplied(
      'stx_transfer',
      from,
      replacement.nonce,
      fee,
      tokenTransferPayload(this.users[to].principal, this.random.logUniform(1_000, 1_000_000), NO_MEMO),
    );
  }

  private unapplied(kind: TxKind, from: number, nonce: number, fee: number, payload: Buffer): TxDraft {
    const account = this.users[from];
    return newDraft({
      kind,
      request: {
        cleared: encodeClearedTx({
          originSigner: account.hash160,
          sponsored: false,
          anchorMode: AnchorMode.Any,
          postConditionMode: PostConditionMode.Deny,
          postConditions: [],
          payload,
        }),
        origin: account.key,
        nonce,
        fee,
        sponsor: -1,
        sponsorNonce: 0,
        sponsorFee: 0,
      },
      senderAddress: account.address,
      nonce,
      fee,
      status: 'success',
      rawResult: OK_TRUE,
      events: [],
      contractAbi: null,
      cost: cost(0, 0, 0, this.random),
    });
  }

  /** Address of a user as the API shows it (for reports). */
  address(i: number): string {
    return this.users[i].address;
  }
}
