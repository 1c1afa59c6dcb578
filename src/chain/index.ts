// Stacks chain decoding: transactions, Clarity values, addresses, burnchain-op txs.
export * from './address.js';
export { hexToBuffer } from './bytes.js';
export * from './clarity.js';
export * from './pox-address.js';
export * from './pox-events.js';
export * from './burnchain-op.js';
export * from './transaction.js';
