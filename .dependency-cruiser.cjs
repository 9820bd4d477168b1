/**
 * The layers the folder layout claims, checked: the data's path is ingest → log → stream → store,
 * read back by query and served by api, with leaves (sketch, goals, schema, agent) below everything
 * and main.ts / cli wiring the parts.
 * `npm run lint` fails on any violation; `npm run deps:graph` draws the folders' graph.
 */
const ours = (folders) => `^src/(${folders.join('|')})/`

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'an import circle makes its files one unit to understand; move what both need below both',
      from: {},
      to: { circular: true },
    },
    {
      name: 'leaves-stay-leaves',
      severity: 'error',
      comment: 'sketch, goals, schema and agent are pure building blocks: they import nothing of ours but each other',
      from: { path: ours(['sketch', 'goals', 'schema', 'agent']), pathNot: '\\.test\\.ts$' },
      to: { path: '^src/', pathNot: ours(['sketch', 'goals', 'schema', 'agent']) },
    },
    {
      name: 'storage-below-processing',
      severity: 'error',
      comment: 'the store and the log know nothing of the stream, queries, ingest, the API or the CLI above them',
      from: { path: ours(['store', 'log']), pathNot: '\\.test\\.ts$' },
      to: { path: ours(['stream', 'query', 'ingest', 'api', 'cli']) },
    },
    {
      name: 'only-main-and-cli-wire',
      severity: 'error',
      comment: 'main.ts and cli/ put the parts together; nothing else imports them, and nothing but them imports api/',
      from: { path: '^src/', pathNot: ['^src/main\\.ts$', '^src/cli/'] },
      to: { path: ['^src/main\\.ts$', '^src/cli/', '^src/api/'], pathNot: '^src/(api|cli)/' },
    },
    {
      name: 'processing-below-queries',
      severity: 'error',
      comment: 'the stream folds; reading its state back for answers is the query side above it',
      from: { path: ours(['stream']), pathNot: '\\.test\\.ts$' },
      to: { path: ours(['query', 'api']) },
    },
    {
      name: 'folders-entered-through-index',
      severity: 'error',
      comment: "another folder's internals are reached through its index.ts (goals/browser.ts is the browser's entry)",
      from: { path: '^src/([^/]+)/' },
      to: {
        path: '^src/([^/]+)/',
        pathNot: ['^src/$1/', '/index\\.ts$', '^src/goals/browser\\.ts$', '^src/log/(embedded|kafka)/'],
      },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: ['^dist/', '^node_modules/', '^test/helpers/'] },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.lint.json' },
    enhancedResolveOptions: { extensions: ['.ts', '.tsx', '.js'] },
    reporterOptions: {
      dot: { collapsePattern: '^src/[^/]+' },
    },
  },
}
