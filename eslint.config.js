import js from '@eslint/js';
import { createTypeScriptImportResolver } from 'eslint-import-resolver-typescript';
import { importX } from 'eslint-plugin-import-x';
import tseslint from 'typescript-eslint';

// Imports run one way (docs/architecture.md): chain <- protocol <- store <- ingest, api <- cli; the devnet
// plays a stacks-node and uses only the chain codec and the protocol. Each zone lists what a folder must not
// import; `except` keeps a folder's imports of itself.
const importRules = {
  'import-x/no-restricted-paths': [
    'error',
    {
      basePath: import.meta.dirname,
      zones: [
        {
          target: './src/chain',
          from: './src',
          except: ['./chain'],
          message: 'src/chain imports nothing local',
        },
        {
          target: './src/protocol',
          from: './src',
          except: ['./protocol', './chain'],
          message: 'src/protocol imports only src/chain',
        },
        {
          target: './src/store',
          from: ['./src/api', './src/ingest', './src/devnet', './src/cli', './src/metrics.ts'],
          message: 'src/store never imports the doors, the devnet or the CLI',
        },
        {
          target: './src/store/read',
          from: './src/store/write',
          message: 'reads never import the write path',
        },
        {
          target: './src/api',
          from: ['./src/ingest', './src/devnet', './src/cli'],
          message: 'src/api never imports ingest, the devnet or the CLI',
        },
        {
          target: './src/ingest',
          from: ['./src/api', './src/devnet', './src/cli'],
          message: 'src/ingest never imports the API, the devnet or the CLI',
        },
        {
          target: './src/devnet',
          from: [
            './src/store',
            './src/ingest',
            './src/api',
            './src/cli',
            './src/config.ts',
            './src/metrics.ts',
          ],
          message: 'src/devnet uses only src/chain and src/protocol',
        },
      ],
    },
  ],
};

export default tseslint.config(
  { ignores: ['node_modules/', 'dist/', 'data/', 'bench/out/', '.tmp/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    plugins: { 'import-x': importX },
    // `../x.js` names `../x.ts`: the TypeScript resolver finds the file a zone is about
    settings: { 'import-x/resolver-next': [createTypeScriptImportResolver()] },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
      ...importRules,
    },
  },
);
