import Type from 'typebox';
import { errorResponses } from './common.js';
import { DEMO } from './examples.js';

// GET /extended/v1/contract/{contract_id} (docs/upstream.md C.16). Upstream takes any text as the id (no
// pattern): what names no deployed contract is a 404 `cannot find contract by ID`.

const ContractInfoParams = Type.Object({
  contract_id: Type.String({
    description: 'A contract id, `<address>.<contract name>`',
    examples: [DEMO.contractId],
  }),
});

const ContractInfo = Type.Object(
  {
    tx_id: Type.String({ description: 'The deploy transaction' }),
    canonical: Type.Boolean(),
    contract_id: Type.String(),
    block_height: Type.Integer(),
    clarity_version: Type.Union([Type.Integer(), Type.Null()], {
      description: 'null for a deploy of the original transaction type',
    }),
    source_code: Type.String(),
    abi: Type.Union([Type.String(), Type.Null()], {
      description: 'The ABI as JSON text, keys ordered as PostgreSQL `jsonb` orders them',
    }),
  },
  { title: 'ContractInfo', description: 'A deployed contract: its source, ABI and deploy transaction' },
);

export const getContractByIdRoute = {
  url: '/extended/v1/contract/:contract_id',
  schema: {
    operationId: 'get_contract_by_id',
    summary: 'Get contract info',
    description: 'The source code, ABI and deploy transaction of a contract.',
    tags: ['Smart Contracts'],
    params: ContractInfoParams,
    response: { 200: ContractInfo, ...errorResponses },
  },
};
