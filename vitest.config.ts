import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

// Suites that start whole processes or a browser run after the rest, on their own: at 2 workers
// beside 180 other files they measured timeouts that were only the machine's load.
const heavy = [
  'test/e2e/**/*.test.ts',
  'packages/*/test/e2e/**/*.test.ts',
  'test/integration/app/deploy-artifacts.test.ts',
  'test/integration/app/no-shared-disk.test.ts',
];

export default defineConfig({
  resolve: {
    // The workspace packages run from their TypeScript sources here, as tsconfig's
    // `customConditions` reads them; a published package resolves to its dist/.
    alias: {
      '@vuln-triage/sdk': fileURLToPath(new URL('./packages/sdk/src/index.ts', import.meta.url)),
    },
  },
  test: {
    globals: false,
    globalSetup: ['test/helpers/global-setup.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    maxWorkers: 2,
    projects: [
      {
        extends: true,
        test: {
          name: 'main',
          include: ['test/**/*.test.ts', 'packages/*/test/**/*.test.ts'],
          exclude: heavy,
          sequence: { groupOrder: 0 },
        },
      },
      {
        extends: true,
        test: { name: 'processes', include: heavy, sequence: { groupOrder: 1 } },
      },
    ],
  },
});
