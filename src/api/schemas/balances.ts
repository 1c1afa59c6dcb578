import Type from 'typebox';
import { StxBalance, TokenOfferingLocked } from './addresses.js';
import { errorResponses } from './common.js';
import { Page, pageQuery } from './lists.js';
import { PrincipalParam, UnanchoredQuery, UntilBlockQuery } from './params.js';

// Balances per asset kind: GET /extended/v1/address/{principal}/stx, /extended/v2/addresses/{principal}/balances/stx
// and /balances/ft (docs/upstream.md C.12 to C.14).

const PrincipalParams = Type.Object({ principal: PrincipalParam });

/** The `stx` member of the account balances (same keys, same values), and the vesting schedule when any. */
const AccountStxBalance = Type.Object(
  { ...StxBalance.properties, token_offering_locked: Type.Optional(TokenOfferingLocked) },
  { title: 'AccountStxBalance', description: 'STX balance, lock state and totals of an account' },
);

const AccountStxBalanceQuery = Type.Object({
  unanchored: UnanchoredQuery,
  until_block: Type.Optional(UntilBlockQuery),
});

export const getAccountStxBalanceRoute = {
  url: '/extended/v1/address/:principal/stx',
  schema: {
    operationId: 'get_account_stx_balance',
    summary: 'Get account STX balance',
    description:
      'The STX balance of an address or contract (with lock state and totals, and pending mempool totals at the tip), at the tip or as of a block.',
    tags: ['Accounts'],
    params: PrincipalParams,
    querystring: AccountStxBalanceQuery,
    response: { 200: AccountStxBalance, ...errorResponses },
  },
};

const { balance, total_miner_rewards_received, lock_tx_id, locked, lock_height } = StxBalance.properties;
const { burnchain_lock_height, burnchain_unlock_height } = StxBalance.properties;
const { estimated_balance, pending_balance_inbound, pending_balance_outbound } = StxBalance.properties;

/** The v2 STX balance: the lock state, then, with `include_mempool`, the pending totals. */
const PrincipalStxBalance = Type.Object(
  {
    balance,
    total_miner_rewards_received,
    lock_tx_id,
    locked,
    lock_height,
    burnchain_lock_height,
    burnchain_unlock_height,
    estimated_balance,
    pending_balance_inbound,
    pending_balance_outbound,
  },
  { title: 'PrincipalStxBalance', description: 'STX balance and lock state of a principal at the tip' },
);

const PrincipalStxBalanceQuery = Type.Object({
  include_mempool: Type.Boolean({
    default: false,
    description:
      'Add the pending mempool totals (`estimated_balance`, `pending_balance_inbound`, `pending_balance_outbound`)',
    examples: [false],
  }),
});

export const getPrincipalStxBalanceRoute = {
  url: '/extended/v2/addresses/:principal/balances/stx',
  schema: {
    operationId: 'get_principal_stx_balance',
    summary: 'Get principal STX balance',
    description: 'The STX balance and lock state of an address or contract at the tip.',
    tags: ['Accounts'],
    params: PrincipalParams,
    querystring: PrincipalStxBalanceQuery,
    response: { 200: PrincipalStxBalance, ...errorResponses },
  },
};

const PrincipalFtBalance = Type.Object(
  {
    token: Type.String({ description: 'The asset identifier, `<contract id>::<token name>`' }),
    balance: Type.String({ description: 'received − sent, above 0' }),
  },
  { title: 'PrincipalFtBalance' },
);

const PrincipalFtBalancesQuery = Type.Object(pageQuery('ftBalance', 'Balances'));

const PrincipalFtBalances = Page(PrincipalFtBalance, {
  title: 'PrincipalFtBalances',
  description: 'The fungible tokens a principal holds (balance above 0), by lowercased asset identifier',
});

export const getPrincipalFtBalancesRoute = {
  url: '/extended/v2/addresses/:principal/balances/ft',
  schema: {
    operationId: 'get_principal_ft_balances',
    summary: 'Get principal FT balances',
    description: 'The fungible token balances of an address or contract at the tip.',
    tags: ['Accounts'],
    params: PrincipalParams,
    querystring: PrincipalFtBalancesQuery,
    response: { 200: PrincipalFtBalances, ...errorResponses },
  },
};
