// ESLint with typescript-eslint's type-checked rules over every TypeScript source of the repo
// (docs/decisions.md, "Lint and format"). Layout is Prettier's (npm run format:check).
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  {
    ignores: [
      '**/node_modules/**',
      '**/dist/**',
      '.data/**',
      'coverage/**',
      'test/.artifacts/**',
      'packages/sdk/src/generated/**',
    ],
  },
  {
    files: ['**/*.ts', '**/*.mts', '**/*.tsx'],
    extends: [js.configs.recommended, ...tseslint.configs.recommendedTypeChecked],
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      // A promise nobody awaits loses its error and its ordering: in a server that is a dropped
      // write or an unhandled rejection; in a test, an assertion that never runs.
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
    },
  },
  {
    // Black-box tests read the API's JSON answers as they come (`await res.json()`), and the
    // conformance setup checks every such answer against openapi/openapi.json at run time; typing
    // each body by hand would copy the schemas the tests exist to check. The promise rules stay on.
    files: ['test/**/*.ts', '**/*.test.ts'],
    rules: {
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
      '@typescript-eslint/no-explicit-any': 'off',
    },
  },
  {
    // TanStack Router's protocol: a route's beforeLoad throws `redirect(...)` (not an Error) to send the user elsewhere.
    files: ['apps/dashboard/**/*.ts', 'apps/dashboard/**/*.tsx'],
    rules: {
      '@typescript-eslint/only-throw-error': [
        'error',
        { allow: [{ from: 'package', package: '@tanstack/router-core', name: 'Redirect' }] },
      ],
    },
  },
);
