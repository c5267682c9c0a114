// npm run format:check (in CI): Prettier, with the settings closest to the code as it was written
// (long lines, single quotes). npm run format rewrites the tree; the scaffolder formats what it writes.
/** @type {import('prettier').Config} */
export default {
  printWidth: 200,
  tabWidth: 2,
  useTabs: false,
  semi: true,
  singleQuote: true,
  quoteProps: 'preserve',
  trailingComma: 'all',
  bracketSpacing: true,
  arrowParens: 'always',
  objectWrap: 'preserve',
  endOfLine: 'lf',
};
