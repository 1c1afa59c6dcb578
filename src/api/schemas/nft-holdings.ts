import Type from 'typebox';
import { errorResponses } from './common.js';
import { DEMO } from './examples.js';
import { Page, pageQuery } from './lists.js';
import { PrincipalParam, UnanchoredQuery } from './params.js';
import { Transaction } from './transactions.js';

// GET /extended/v1/tokens/nft/holdings?principal= (docs/upstream.md C.15).

const NftHoldingsQuery = Type.Object({
  principal: Type.Union(PrincipalParam.anyOf, {
    description: 'The holder: a Stacks address, or a contract id `<address>.<contract name>`',
    examples: [DEMO.busyAddress],
    'x-expects': (PrincipalParam as { 'x-expects'?: string })['x-expects'],
    'x-check': 'principal',
  }),
  asset_identifiers: Type.Optional(
    Type.Array(Type.String(), {
      description:
        'Only these token classes (`<contract id>::<token name>`): repeat the key, or separate them by commas',
      examples: [[`${DEMO.contractId}::pixel-punk`]],
    }),
  ),
  ...pageQuery('nftHolding', 'Tokens'),
  unanchored: UnanchoredQuery,
  tx_metadata: Type.Boolean({
    default: false,
    description: 'Give each token’s transaction whole (`tx`) instead of its id (`tx_id`)',
    examples: [false],
  }),
});

/** `asset_identifiers=a,b` and `asset_identifiers=a&asset_identifiers=b` both name several (preValidation). */
async function splitAssetIdentifiers(request: { query: unknown }) {
  const query = request.query as { asset_identifiers?: string | string[] };
  if (query.asset_identifiers === undefined) return;
  query.asset_identifiers = [query.asset_identifiers].flat().flatMap((value) => value.split(','));
}

const NftHolding = Type.Object(
  {
    asset_identifier: Type.String(),
    value: Type.Object({ hex: Type.String(), repr: Type.String() }, { description: 'The token' }),
    block_height: Type.Integer({ description: 'Height of the event that gave it to the holder' }),
    tx_id: Type.Optional(Type.String({ description: 'That event’s transaction (without `tx_metadata`)' })),
    tx: Type.Optional(Transaction),
  },
  { title: 'NftHolding', description: 'A non-fungible token a principal holds' },
);

const NftHoldings = Page(NftHolding, {
  title: 'NftHoldings',
  description:
    'The non-fungible tokens a principal holds (the recipient of each token’s latest event), latest received first',
});

/** An asset identifier whose contract part is no principal: 400 `Invalid asset identifier`. */
export const getNftHoldingsRoute = {
  url: '/extended/v1/tokens/nft/holdings',
  schema: {
    operationId: 'get_nft_holdings',
    summary: 'Non-fungible token holdings',
    description: 'The non-fungible tokens an address or contract holds, latest received first.',
    tags: ['Non-Fungible Tokens'],
    querystring: NftHoldingsQuery,
    response: { 200: NftHoldings, ...errorResponses },
  },
  preValidation: splitAssetIdentifiers,
};
