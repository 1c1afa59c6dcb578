import Type, { type Static } from 'typebox';

/**
 * Upstream's contract id pattern, kept verbatim because its validation messages quote it (the `.` is
 * unescaped there; the route checks the id properly after the schema).
 */
const CONTRACT_ID_PATTERN = '^[0123456789ABCDEFGHJKMNPQRSTVWXYZ]{28,41}.[a-zA-Z]([a-zA-Z0-9]|[-_]){0,39}$';

/** Most distinct contract ids one status request may ask for. */
export const MAX_CONTRACT_IDS = 50;

const ContractId = Type.String({
  pattern: CONTRACT_ID_PATTERN,
  description: 'a contract id, `<address>.<contract name>`',
  examples: ['SP000000000000000000002Q6VF78.pox'],
});

export const ContractStatusQuery = Type.Object({
  contract_id: Type.Union([Type.Array(ContractId), ContractId], {
    description: `Contract ids to report on: repeat the key for several (\`?contract_id=A&contract_id=B\`; commas do not separate ids). Duplicates count once; at most ${MAX_CONTRACT_IDS} distinct ids.`,
  }),
});
export type ContractStatusQuery = Static<typeof ContractStatusQuery>;

const ContractStatusResult = Type.Object({
  status: Type.String({
    description:
      '`pending` while only in the mempool, else the deploy transaction’s status: success, abort_by_response, abort_by_post_condition, problematic_skipped',
  }),
  tx_id: Type.String(),
  contract_id: Type.String(),
  block_height: Type.Optional(Type.Integer({ description: 'only for a mined deployment' })),
});

export const ContractStatusEntry = Type.Object({
  found: Type.Boolean(),
  result: Type.Optional(ContractStatusResult),
});
export type ContractStatusEntry = Static<typeof ContractStatusEntry>;

export const ContractStatusResponse = Type.Record(Type.String(), ContractStatusEntry, {
  title: 'ContractStatusResponse',
  description:
    'Per requested contract id (in request order): the latest canonical deployment, else the pending one with the lowest nonce, else `found: false` (contract 2.11)',
});
export type ContractStatusResponse = Static<typeof ContractStatusResponse>;
