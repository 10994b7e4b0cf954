import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  {
    ignores: [
      'dist/**',
      'packages/*/dist/**',
      'node_modules/**',
      '.data/**',
      'coverage/**',
      'test-results/**',
      'bench/.data/**',
      '.scratch/**',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: {
      globals: { process: 'readonly', console: 'readonly', URL: 'readonly', Buffer: 'readonly' },
    },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
      'no-console': ['error', { allow: ['error', 'warn'] }],
    },
  },
  {
    // Request types come from each route's schema through typed(app) (docs/architecture.md#adding-things).
    files: ['src/api/**/*.ts'],
    rules: {
      'no-restricted-syntax': [
        'error',
        {
          selector:
            ':matches(TSAsExpression, TSTypeAssertion) > MemberExpression.expression[property.name=/^(body|query|params)$/]',
          message: 'Give the route a schema and register it on typed(app) instead of casting the request.',
        },
      ],
    },
  },
  {
    files: ['bench/**', 'src/cli/**', 'test/**', '.ci/**'],
    rules: { 'no-console': 'off' },
  },
);
