/* global module */
/**
 * The layers of src/ (STYLE: layout), checked by `npm run lint`. Imports run one way:
 *   lib ← db ← domain ← (api | jobs | workers) ← app ← main.ts / cli
 * `parsers` is a leaf (it imports only lib) used by domain and workers; `api` and `workers` never
 * import each other. Type-only imports count (tsPreCompilationDeps): a cycle of types is still two
 * modules that cannot be read apart. Cycles are refused between files and between folders.
 */
const EDGE = '^src/(cli/|main\\.ts$)';
const layer = (name, from, to, comment) => ({
  name,
  severity: 'error',
  comment,
  from: { path: from },
  to: { path: to },
});

module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'Modules that import each other, directly or through others.',
      from: { path: '^src/' },
      to: { circular: true },
    },
    {
      name: 'no-circular-folders',
      severity: 'error',
      scope: 'folder',
      comment: 'Folders that import each other, directly or through others.',
      from: { path: '^src/' },
      to: { circular: true },
    },
    layer('lib-is-a-leaf', '^src/lib/', '^src/(?!lib/)', 'lib/ imports nothing else of src/.'),
    layer('parsers-is-a-leaf', '^src/parsers/', '^src/(?!(parsers|lib)/)', 'parsers/ imports only lib/.'),
    layer('db-sits-on-lib', '^src/db/', '^src/(?!(db|lib)/)', 'db/ imports only lib/.'),
    layer(
      'domain-sits-on-db',
      '^src/domain/',
      `^src/(api|jobs|workers|app)/|${EDGE}`,
      'domain/ imports db/, lib/ and parsers/, never the edges that call it.',
    ),
    layer(
      'jobs-sit-on-domain',
      '^src/jobs/',
      `^src/(api|workers|app|parsers)/|${EDGE}`,
      'jobs/ (queue names, payloads, producers) imports domain/ and below.',
    ),
    layer(
      'api-sits-on-domain',
      '^src/api/',
      `^src/(workers|app|parsers)/|${EDGE}`,
      'api/ never imports workers/ or app/ (app/ builds it); parsers/ are reached through domain/.',
    ),
    layer(
      'workers-sit-on-domain',
      '^src/workers/',
      `^src/(api|app)/|${EDGE}`,
      'workers/ never imports api/ or app/ (app/ starts them).',
    ),
    layer(
      'config-files-through-lib',
      '^src/(?!lib/)',
      '^config/',
      'config/*.json is read and validated by lib/config.ts alone; others take it from the Config.',
    ),
    layer('app-is-the-root', '^src/app/', EDGE, 'app/ is imported by main.ts and cli/, never the reverse.'),
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { extensions: ['.ts', '.js', '.json'] },
    exclude: { path: '\\.(css|svg)$' },
  },
};
