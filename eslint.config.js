import js from '@eslint/js';
import tseslint from 'typescript-eslint';

// Imports run one way (docs/architecture.md): chain <- protocol <- store <- ingest, api <- cli; the devnet
// plays a stacks-node and uses only the chain codec and the protocol. Each entry names, for the files of one
// folder, the import paths they must not use (a regular expression on the import string; type-only imports
// count too).
const boundaries = [
  { files: ['src/chain/**'], regex: '^\\.\\./', message: 'src/chain imports nothing local' },
  { files: ['src/protocol/**'], regex: '^\\.\\./(?!chain/)', message: 'src/protocol imports only src/chain' },
  {
    files: ['src/store/**'],
    regex: '(^|/)(api|push|ingest|devnet|cli)/|/metrics\\.js$',
    message: 'src/store never imports the doors, the devnet or the CLI',
  },
  { files: ['src/store/read/**'], regex: '^\\.\\./write/', message: 'reads never import the write path' },
  {
    files: ['src/api/**'],
    regex: '(^|/)(ingest|devnet|cli)/',
    message: 'src/api never imports ingest, the devnet or the CLI',
  },
  {
    files: ['src/push/**'],
    regex: '(^|/)(ingest|devnet|cli)/',
    message: 'src/push never imports ingest, the devnet or the CLI',
  },
  {
    files: ['src/ingest/**'],
    regex: '(^|/)(api|push|devnet|cli)/',
    message: 'src/ingest never imports the API, live push, the devnet or the CLI',
  },
  {
    files: ['src/devnet/**'],
    regex: '(^|/)(store|ingest|api|push|cli)/|/(config|metrics)\\.js$',
    message: 'src/devnet uses only src/chain and src/protocol',
  },
];

// SQL lives only in src/store: elsewhere a tagged template on `sql` (or on `x.sql`), `unsafe(...)` (raw SQL text),
// or importing the database client itself fails lint. Other code calls the store's functions.
const sqlOutsideStore = [
  { selector: "TaggedTemplateExpression[tag.name='sql']", message: 'SQL lives only in src/store' },
  { selector: "TaggedTemplateExpression[tag.property.name='sql']", message: 'SQL lives only in src/store' },
  { selector: "CallExpression[callee.property.name='unsafe']", message: 'SQL lives only in src/store' },
  {
    selector: "ImportDeclaration[source.value='postgres']",
    message: 'only src/store opens the database client',
  },
  {
    selector: 'ImportDeclaration[source.value=/^@electric-sql\\/pglite/]',
    message: 'only src/store opens the database client',
  },
];

/** The folders whose rules also bind `files` (src/store's bind src/store/read). */
const enclosing = (files) =>
  boundaries.filter((b) => b.files !== files && files[0].startsWith(b.files[0].slice(0, -2)));

export default tseslint.config(
  { ignores: ['node_modules/', 'dist/', 'data/', 'bench/out/', '.tmp/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
    },
  },
  {
    files: ['src/**'],
    ignores: ['src/store/**'],
    rules: { 'no-restricted-syntax': ['error', ...sqlOutsideStore] },
  },
  // A function does one thing: past 80 lines it does several, so split it by concern, or say above it why
  // not (an eslint-disable-next-line comment with the reason).
  {
    files: ['src/**'],
    rules: { 'max-lines-per-function': ['error', { max: 80, IIFEs: true }] },
  },
  // one config object per folder; a file matched by several (src/store/read) gets the rule of the last one,
  // so each also lists the patterns of the folders enclosing it
  ...boundaries.map(({ files, regex, message }) => ({
    files,
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            { regex, message },
            ...enclosing(files).map((b) => ({ regex: b.regex, message: b.message })),
          ],
        },
      ],
    },
  })),
);
