// Lint config: typed rules so promise misuse on the event loop (floating promises) fails CI.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import globals from 'globals';

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'src/gen/**', 'coverage/**', 'native-bridge/build/**', '.ci/cache/**', 'bench/out/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: { allowDefaultProject: ['*.js', '*.mjs', 'scripts/*.mjs', 'bin/*.js', 'bench/*.mjs'] }, tsconfigRootDir: import.meta.dirname },
      globals: { ...globals.node },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/consistent-type-imports': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
  {
    // The environment is parsed once, in src/config.ts, and the CLI hands the parts down
    // (docs/configuration.md): a module deep inside must not grow a variable of its own.
    files: ['src/**/*.ts'],
    ignores: ['src/config.ts', 'src/cli/**'],
    rules: {
      'no-restricted-properties': ['error', { object: 'process', property: 'env', message: 'Read the environment in src/config.ts (parseConfig) and pass the setting down.' }],
      'no-restricted-imports': ['error', { paths: ['process', 'node:process'].map((name) => ({ name, importNames: ['env'], message: 'Read the environment in src/config.ts (parseConfig) and pass the setting down.' })) }],
    },
  },
  {
    // Tests read untyped JSON bodies from real servers; asserting on them is the point.
    files: ['test/**/*.ts', 'bench/**/*.ts'],
    rules: {
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
      '@typescript-eslint/no-non-null-assertion': 'off',
    },
  },
  {
    files: ['**/*.js', '**/*.mjs'],
    ...tseslint.configs.disableTypeChecked,
  },
  {
    files: ['**/*.js', '**/*.mjs'],
    rules: { '@typescript-eslint/no-floating-promises': 'off', '@typescript-eslint/no-misused-promises': 'off' },
  },
  {
    // Scripts of the pages the gateway serves (web/): they run in the browser, as classic scripts.
    files: ['web/**/*.js'],
    languageOptions: { globals: { ...globals.browser, SwaggerUIBundle: 'readonly' }, sourceType: 'script' },
  },
);
