import tseslint from 'typescript-eslint';
export default tseslint;
