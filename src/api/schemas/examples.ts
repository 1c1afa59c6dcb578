// Example values of the parameters shown in /doc (and pre-filled by its "Try it out"): real ids of the demo
// chain that `npm start` indexes into an empty database (src/cli/demo.ts: seed "demo", 100 blocks; the
// generator is deterministic, so these never change unless it does). test/api/doc-examples.test.ts indexes
// that chain and checks that every example of every operation answers 200; when the generator changes,
// it prints the values to put here.

export const DEMO = {
  /** a canonical block of the Nakamoto era */
  blockHeight: 70,
  blockHash: '0xd0f0ee4d143f71f53397d04a0f43c2617c0faab1ddea57af9567fbcdcbf5871b',
  indexBlockHash: '0x789e06a568697740ed0f1bbfeb1ce29216aba9c820bb3cff62444e700972a7ac',
  /** the burn block of block 70 */
  burnBlockHeight: 840052,
  burnBlockHash: '0x000000000000000067a3a62ae1ebb56af54ac25e69cb5c7da47c2af3e6b88c89',
  /** the first microblock a canonical block confirmed (epoch 2.x) */
  microblockHash: '0xb708d479960d2c9940249c909f72245581992570df535aff1947443c75cc49a3',
  /** a canonical contract call */
  txId: '0x36a6ad70b2ff0c4554131718958494cbed07e3c5e9f598ca9173b6178d67b0d8',
  otherTxId: '0x4978639659cf80108d90401feac642bb22b176c2adbc7cb2f31b5951b059ec5e',
  /** the standard principal in most transactions */
  busyAddress: 'SP277MPW2G4E84PC7N2CV3GWT14B2M6RKP7VNZ7KQ',
  /** a transaction of the busy address */
  busyTxId: '0x028668b3b381992fa59c47ba7d2996b5cdfef51ce8a840934d6d190ad072fa26',
  contractId: 'SP1T83750DYDW9VSJCCSBZZM9JDMA4S7HD1YRKWFY.pixel-punks',
  otherContractId: 'SP2QRY767Y0JC9450EVM4ZZ8JETRJW6GVYFQ9SW0V.mango-token',
} as const;
