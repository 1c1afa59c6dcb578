import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import {
  AddressHashMode,
  AddressVersion,
  AnchorMode as LibAnchorMode,
  AuthType,
  Cl,
  ClarityVersion,
  Pc,
  PostConditionMode as LibPostConditionMode,
  StacksTransactionWire,
  TenureChangeCause as LibTenureChangeCause,
  TransactionSigner,
  addressFromPublicKeys,
  createNakamotoCoinbasePayload,
  createSingleSigSpendingCondition,
  createStandardAuth,
  createTenureChangePayload,
  deserializeTransaction,
  makeContractCall,
  makeContractDeploy,
  makeSTXTokenTransfer,
  nextVerification,
  privateKeyToAddress,
  privateKeyToPublic,
  serializeCV,
  sponsorTransaction,
  type PayloadInput,
} from '@stacks/transactions';
import { seedDemoChain, urlsToTry } from '../../src/cli/demo.js';
import { generateFile } from '../../src/cli/generate.js';
import { loadConfig } from '../../src/config.js';
import { defaultNakamotoHeight, type GenerateReport } from '../../src/devnet/chain.js';
import { KeyRing } from '../../src/devnet/keys.js';
import { signTx, type SignRequest } from '../../src/devnet/signer.js';
import {
  AnchorMode,
  PostConditionMode,
  TenureChangeCause,
  contractCallPayload,
  contractPrincipalCV,
  encodeClearedTx,
  ftSentEqualPostCondition,
  nakamotoCoinbasePayload,
  noneCV,
  okCV,
  smartContractPayload,
  someCV,
  stringAsciiCV,
  tenureChangePayload,
  tokenTransferPayload,
  trueCV,
  tupleCV,
  uintCV,
} from '../../src/devnet/wire.js';
import { Ingestor } from '../../src/ingest/ingestor.js';
import { replayFile } from '../../src/ingest/replay.js';
import { AccessCounters } from '../../src/metrics.js';
import { readTsv } from '../../src/protocol/tsv.js';
import { startTestApi } from '../support/api.js';
import { openTestStore, silentLogger, stopOwnCluster } from '../support/database.js';
import { testEngines } from '../support/engines.js';

const dir = mkdtempSync(join(tmpdir(), 'generator-test-'));
const SMALL = { blocks: 30, accounts: 20, seed: 'test', txsPerBlock: 20 };
let report: GenerateReport;
const chainFile = join(dir, 'chain.tsv');

before(async () => {
  report = await generateFile({ ...SMALL, workers: 0 }, chainFile, false);
});

after(async () => {
  rmSync(dir, { recursive: true, force: true });
  await stopOwnCluster();
});

function sha256(file: string): string {
  return createHash('sha256').update(readFileSync(file)).digest('hex');
}

describe('transactions are what @stacks/transactions builds', () => {
  const ring = new KeyRing('wire');
  const [a, b, s] = [ring.add('a'), ring.add('b'), ring.add('s')];
  const key = (account: { key: number }) => ring.privateKeys[account.key].toString('hex') + '01';
  const sign = (
    request: Omit<SignRequest, 'sponsor' | 'sponsorNonce' | 'sponsorFee'> & Partial<SignRequest>,
  ) => signTx({ sponsor: -1, sponsorNonce: 0, sponsorFee: 0, ...request }, ring.material());

  test('addresses', () => {
    assert.equal(a.address, privateKeyToAddress(key(a), 'mainnet'));
    assert.match(a.address, /^SP[0-9A-Z]{38,39}$/);
  });

  test('a token transfer with a memo', async () => {
    const memo = Buffer.alloc(34);
    memo.write('hello');
    const lib = await makeSTXTokenTransfer({
      recipient: b.address,
      amount: 12345n,
      senderKey: key(a),
      network: 'mainnet',
      nonce: 7n,
      fee: 180n,
      memo: 'hello',
    });
    const ours = sign({
      cleared: encodeClearedTx({
        originSigner: a.hash160,
        sponsored: false,
        anchorMode: AnchorMode.Any,
        postConditionMode: PostConditionMode.Deny,
        postConditions: [],
        payload: tokenTransferPayload(b.principal, 12345n, memo),
      }),
      origin: a.key,
      nonce: 7,
      fee: 180,
    });
    assert.equal(ours.raw.toString('hex'), lib.serialize());
    assert.equal(ours.txid.toString('hex'), lib.txid());
  });

  test('a sponsored token transfer', async () => {
    const unsigned = await makeSTXTokenTransfer({
      recipient: b.address,
      amount: 5n,
      senderKey: key(a),
      network: 'mainnet',
      nonce: 3n,
      fee: 0n,
      sponsored: true,
    });
    const lib = await sponsorTransaction({
      transaction: unsigned,
      sponsorPrivateKey: key(s),
      fee: 400n,
      sponsorNonce: 9n,
      network: 'mainnet',
    });
    const ours = sign({
      cleared: encodeClearedTx({
        originSigner: a.hash160,
        sponsored: true,
        anchorMode: AnchorMode.Any,
        postConditionMode: PostConditionMode.Deny,
        postConditions: [],
        payload: tokenTransferPayload(b.principal, 5n, Buffer.alloc(34)),
      }),
      origin: a.key,
      nonce: 3,
      fee: 0,
      sponsor: s.key,
      sponsorNonce: 9,
      sponsorFee: 400,
    });
    assert.equal(ours.raw.toString('hex'), lib.serialize());
    assert.equal(ours.txid.toString('hex'), lib.txid());
  });

  test('a contract call with a post condition, and a deploy', async () => {
    const lib = await makeContractCall({
      contractAddress: b.address,
      contractName: 'mango-token',
      functionName: 'transfer',
      functionArgs: [
        Cl.uint(100),
        Cl.standardPrincipal(a.address),
        Cl.standardPrincipal(b.address),
        Cl.none(),
      ],
      senderKey: key(a),
      network: 'mainnet',
      nonce: 1n,
      fee: 300n,
      postConditionMode: 'deny',
      postConditions: [Pc.principal(a.address).willSendEq(100).ft(`${b.address}.mango-token`, 'mango')],
      validateWithAbi: false,
    });
    const token = { version: 22, hash160: b.hash160, name: 'mango-token' };
    const ours = sign({
      cleared: encodeClearedTx({
        originSigner: a.hash160,
        sponsored: false,
        anchorMode: AnchorMode.Any,
        postConditionMode: PostConditionMode.Deny,
        postConditions: [
          ftSentEqualPostCondition(
            { version: 22, hash160: a.hash160 },
            { ...token, contractName: token.name, assetName: 'mango' },
            100n,
          ),
        ],
        payload: contractCallPayload(token, 'transfer', [uintCV(100), a.principal, b.principal, noneCV]),
      }),
      origin: a.key,
      nonce: 1,
      fee: 300,
    });
    assert.equal(ours.raw.toString('hex'), lib.serialize());

    const code = '(define-data-var x uint u0)\n';
    const deploy = await makeContractDeploy({
      contractName: 'c',
      codeBody: code,
      clarityVersion: ClarityVersion.Clarity2,
      senderKey: key(a),
      network: 'mainnet',
      nonce: 0n,
      fee: 1000n,
      postConditionMode: 'allow',
    });
    const oursDeploy = sign({
      cleared: encodeClearedTx({
        originSigner: a.hash160,
        sponsored: false,
        anchorMode: AnchorMode.Any,
        postConditionMode: PostConditionMode.Allow,
        postConditions: [],
        payload: smartContractPayload('c', code, 2),
      }),
      origin: a.key,
      nonce: 0,
      fee: 1000,
    });
    assert.equal(oursDeploy.raw.toString('hex'), deploy.serialize());
  });

  /** A miner's transaction as the library builds it: on-chain only, deny mode, signed by `a`. */
  function libMinerTx(payload: PayloadInput, nonce: number) {
    const condition = createSingleSigSpendingCondition(
      AddressHashMode.P2PKH,
      privateKeyToPublic(key(a)),
      nonce,
      0,
    );
    const tx = new StacksTransactionWire({
      payload,
      auth: createStandardAuth(condition),
      network: 'mainnet',
    });
    tx.anchorMode = LibAnchorMode.OnChainOnly;
    tx.postConditionMode = LibPostConditionMode.Deny;
    new TransactionSigner(tx).signOrigin(key(a));
    return tx;
  }

  const minerTx = (payload: Buffer, nonce: number) =>
    sign({
      cleared: encodeClearedTx({
        originSigner: a.hash160,
        sponsored: false,
        anchorMode: AnchorMode.OnChainOnly,
        postConditionMode: PostConditionMode.Deny,
        postConditions: [],
        payload,
      }),
      origin: a.key,
      nonce,
      fee: 0,
    });

  test('tenure changes (block found, extended)', () => {
    const hash = (n: number, byte: number) => Buffer.alloc(n, byte);
    for (const [cause, libCause] of [
      [TenureChangeCause.BlockFound, LibTenureChangeCause.BlockFound],
      [TenureChangeCause.Extended, LibTenureChangeCause.Extended],
    ] as const) {
      const lib = libMinerTx(
        createTenureChangePayload(
          hash(20, 1).toString('hex'),
          hash(20, 2).toString('hex'),
          hash(20, 3).toString('hex'),
          hash(32, 4).toString('hex'),
          7,
          libCause,
          a.hash160.toString('hex'),
        ),
        19,
      );
      const ours = minerTx(
        tenureChangePayload({
          tenureConsensusHash: hash(20, 1),
          prevTenureConsensusHash: hash(20, 2),
          burnViewConsensusHash: hash(20, 3),
          previousTenureEnd: hash(32, 4),
          previousTenureBlocks: 7,
          cause,
          pubkeyHash: a.hash160,
        }),
        19,
      );
      assert.equal(ours.raw.toString('hex'), lib.serialize());
      assert.equal(ours.txid.toString('hex'), lib.txid());
    }
  });

  test('Nakamoto coinbases, with and without an alternative recipient', () => {
    const data = Buffer.alloc(32, 9);
    const proof = Buffer.alloc(80, 5);
    const contract = { version: 22, hash160: b.hash160, name: 'pool' };
    for (const [recipient, libRecipient] of [
      [null, Cl.none()],
      [b.principal, Cl.some(Cl.standardPrincipal(b.address))],
      [
        contractPrincipalCV(contract.version, contract.hash160, contract.name),
        Cl.some(Cl.contractPrincipal(b.address, 'pool')),
      ],
    ] as const) {
      const lib = libMinerTx(createNakamotoCoinbasePayload(data, libRecipient, proof), 20);
      const ours = minerTx(nakamotoCoinbasePayload(data, recipient, proof), 20);
      assert.equal(ours.raw.toString('hex'), lib.serialize());
      assert.equal(ours.txid.toString('hex'), lib.txid());
    }
  });

  test('clarity values', () => {
    const lib = Cl.tuple({
      sender: Cl.standardPrincipal(a.address),
      action: Cl.stringAscii('transfer'),
      amount: Cl.uint(2n ** 100n),
      memo: Cl.some(Cl.uint(5)),
    });
    const ours = tupleCV({
      sender: a.principal,
      action: stringAsciiCV('transfer'),
      amount: uintCV(2n ** 100n),
      memo: someCV(uintCV(5)),
    });
    assert.equal(ours.toString('hex'), serializeCV(lib));
    assert.equal(okCV(trueCV).toString('hex'), serializeCV(Cl.ok(Cl.bool(true))));
  });
});

describe('the generated chain', () => {
  test('is deterministic: same seed, same bytes, whatever the number of signer threads', async () => {
    const again = join(dir, 'again.tsv');
    const threaded = join(dir, 'threaded.tsv');
    const other = join(dir, 'other.tsv');
    await generateFile({ ...SMALL, workers: 0 }, again, false);
    await generateFile({ ...SMALL, workers: 2 }, threaded, false);
    await generateFile({ ...SMALL, seed: 'other', workers: 0 }, other, false);
    assert.equal(sha256(again), sha256(chainFile));
    assert.equal(sha256(threaded), sha256(chainFile));
    assert.notEqual(sha256(other), sha256(chainFile));
  });

  test('holds every kind of message and event', () => {
    assert.equal(report.tipHeight, 30);
    assert.equal(report.paths['/new_block'], 31); // 30 heights, and the block the fork orphaned
    assert.ok(report.paths['/new_burn_block'] >= 33);
    assert.ok(report.paths['/new_microblocks'] >= 1);
    assert.ok(report.paths['/new_mempool_tx'] >= 10);
    assert.ok(report.paths['/drop_mempool_tx'] >= 1);
    assert.equal(report.reorgs, 1);
    assert.equal(report.orphanedTxs, 1);
    assert.ok(report.microblockTxs >= 2);
    assert.ok(report.failedTxs >= 2);
    assert.ok(report.mempoolPending >= 1);
    for (const type of [
      'stx_transfer_event',
      'stx_mint_event',
      'stx_lock_event',
      'ft_transfer_event',
      'ft_mint_event',
      'ft_burn_event',
      'nft_transfer_event',
      'nft_mint_event',
      'nft_burn_event',
      'contract_event',
    ]) {
      assert.ok((report.events[type] ?? 0) >= 1, `${type} present`);
    }
    assert.equal(report.events.stx_mint_event, SMALL.accounts);
  });

  test('every transaction is validly signed and its id is the hash of its bytes', async () => {
    const seen = new Set<string>();
    let sponsored = 0;
    for await (const message of readTsv(chainFile)) {
      if (message.path !== '/new_block') continue;
      const block = JSON.parse(message.payload) as { transactions: { txid: string; raw_tx: string }[] };
      for (const { txid, raw_tx } of block.transactions) {
        if (seen.has(txid)) continue;
        seen.add(txid);
        const tx = deserializeTransaction(raw_tx.slice(2));
        assert.equal('0x' + tx.txid(), txid);
        if (tx.auth.spendingCondition.signer === '0'.repeat(40)) continue; // the unsigned genesis tx
        const originSigHash = tx.verifyOrigin();
        if (tx.auth.authType === AuthType.Sponsored) {
          sponsored++;
          const condition = tx.auth.sponsorSpendingCondition;
          assert.ok('signature' in condition);
          const { pubKey } = nextVerification(
            originSigHash,
            AuthType.Sponsored,
            condition.fee,
            condition.nonce,
            condition.keyEncoding,
            condition.signature.data,
          );
          assert.equal(
            addressFromPublicKeys(AddressVersion.MainnetSingleSig, condition.hashMode, 1, [pubKey]).hash160,
            condition.signer,
          );
        }
      }
    }
    assert.ok(seen.size >= report.canonicalTxs);
    assert.ok(sponsored >= 1);
  });

  for (const engine of testEngines(import.meta.url)) {
    test(`replays with no error and matches the generator's counts (${engine})`, async () => {
      const store = await openTestStore(engine);
      try {
        const stats = await replayFile(
          new Ingestor(store, { isMainnet: true, logger: silentLogger }),
          chainFile,
        );
        assert.equal(stats.messages, report.messages);
        assert.equal(stats.duplicates, 0);
        const [tip] = await store.sql<{ block_height: number; index_block_hash: string }[]>`
          SELECT block_height, index_block_hash FROM chain_tip`;
        assert.deepEqual(tip, { block_height: report.tipHeight, index_block_hash: report.tipIndexBlockHash });
        const [counts] = await store.sql<
          { mined: number; failed: number; microblock: number; orphaned: number; pending: number }[]
        >`
          SELECT
            (SELECT count(DISTINCT tx_id)::int FROM txs
              WHERE canonical AND microblock_canonical AND index_block_hash <> '') AS mined,
            (SELECT count(*)::int FROM txs WHERE canonical AND microblock_canonical AND status = -1
              AND event_count = 0) AS failed,
            (SELECT count(*)::int FROM txs WHERE canonical AND microblock_canonical AND microblock_hash <> ''
              AND index_block_hash <> '') AS microblock,
            (SELECT count(*)::int FROM txs WHERE NOT canonical) AS orphaned,
            (SELECT count(*)::int FROM mempool_txs WHERE NOT pruned) AS pending`;
        assert.equal(counts.mined, report.canonicalTxs);
        assert.equal(counts.failed, report.failedTxs);
        assert.equal(counts.microblock, report.microblockTxs);
        assert.equal(counts.pending, report.mempoolPending);
        assert.ok(counts.orphaned >= 2, 'the orphaned block keeps its txs, not canonical');
        const [orphanOnly] = await store.sql<{ n: number }[]>`
          SELECT count(*)::int AS n FROM txs o
          WHERE NOT o.canonical AND NOT EXISTS (SELECT 1 FROM txs c WHERE c.tx_id = o.tx_id AND c.canonical)`;
        assert.equal(orphanOnly.n, report.orphanedTxs);

        const rows = await store.sql<{ kind: number; type: number | null; n: number }[]>`
          SELECT kind, asset_event_type AS type, count(*)::int AS n FROM events
          WHERE canonical AND microblock_canonical AND index_block_hash <> ''
          GROUP BY 1, 2`;
        const count = (kind: number, type: number | null) =>
          rows.find((r) => r.kind === kind && r.type === type)?.n ?? 0;
        assert.equal(count(1, 1), report.events.stx_transfer_event);
        assert.equal(count(1, 2), report.events.stx_mint_event);
        assert.equal(count(2, 1), report.events.ft_transfer_event);
        assert.equal(count(2, 2), report.events.ft_mint_event);
        assert.equal(count(2, 3), report.events.ft_burn_event);
        assert.equal(count(3, 1), report.events.nft_transfer_event);
        assert.equal(count(3, 2), report.events.nft_mint_event);
        assert.equal(count(3, 3), report.events.nft_burn_event);
        assert.equal(count(4, null), report.events.stx_lock_event);
        assert.equal(count(5, null), report.events.contract_event);

        const [contracts] = await store.sql<{ n: number }[]>`
          SELECT count(*)::int AS n FROM smart_contracts WHERE canonical AND contract_id IN
            (${report.sample.tokenContract}, ${report.sample.nftContract}) AND abi IS NOT NULL`;
        assert.equal(contracts.n, 2);
      } finally {
        await store.close();
      }
    });
  }
});

describe('start: seeding an empty database', () => {
  test('indexes a demo chain (into Nakamoto) once, then lists URLs that answer 200 (pglite)', async () => {
    const store = await openTestStore('pglite');
    try {
      const config = loadConfig({});
      const chain = {
        blocks: 14,
        accounts: 12,
        seed: 'demo-test',
        txsPerBlock: 5,
        workers: 0,
        nakamotoHeight: defaultNakamotoHeight(14),
      };
      const seeded = await seedDemoChain(store, config, silentLogger, { chain });
      assert.ok(seeded);
      assert.equal(seeded.tipHeight, 14);
      assert.ok(seeded.tenures >= 2);
      const [tip] = await store.sql<{ block_height: number }[]>`SELECT block_height FROM chain_tip`;
      assert.equal(tip.block_height, 14);
      assert.equal(await seedDemoChain(store, config, silentLogger, { chain }), null);

      const { app: api } = await startTestApi({ store });
      try {
        const urls = await urlsToTry(api, store);
        const paths = urls.map((u) => u.path);
        assert.ok(paths.includes('/extended/v2/blocks/latest'));
        const latest = (await api.inject({ method: 'GET', url: '/extended/v2/blocks/latest' })).json<{
          height: number;
          tenure_height: number;
          block_time: number;
          burn_block_time: number;
        }>();
        assert.equal(latest.height, 14);
        assert.equal(latest.tenure_height, seeded.tipTenureHeight);
        assert.ok(latest.tenure_height < latest.height, 'several blocks a tenure');
        assert.ok(latest.block_time > latest.burn_block_time, 'the block has its own time');
        assert.ok(paths.includes('/extended/v2/blocks/13'));
        for (const path of paths) {
          assert.equal((await api.inject({ method: 'GET', url: path })).statusCode, 200, path);
        }

        // Under access control, checking the URLs spends nothing of the user's budget, and keys required
        // do not empty the list.
        for (const apiKeysRequired of [false, true]) {
          const limited = await startTestApi({
            store,
            accessControl: {
              apiKeysRequired,
              rateLimitEnabled: true,
              anonymousLimit: 5,
              keyedLimit: 500,
              trustedProxies: [],
              counters: new AccessCounters(),
            },
          });
          try {
            assert.deepEqual(await urlsToTry(limited.app, store), urls, `keys required: ${apiKeysRequired}`);
            const first = await limited.app.inject({ method: 'GET', url: '/extended' });
            assert.equal(first.statusCode, apiKeysRequired ? 401 : 200);
            assert.equal(first.headers['ratelimit-remaining'], '4', 'the first request of the user');
          } finally {
            await limited.close();
          }
        }
      } finally {
        await api.close();
      }
    } finally {
      await store.close();
    }
  });
});
