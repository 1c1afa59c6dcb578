import Type, { type Static } from 'typebox';
import { ContractIdsQuery } from './params.js';

export const ContractStatusQuery = Type.Object({ contract_id: ContractIdsQuery });
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
    'Per requested contract id (in request order): the latest canonical deployment, else the pending one with the lowest nonce, else `found: false`',
});
export type ContractStatusResponse = Static<typeof ContractStatusResponse>;
