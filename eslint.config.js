// ESLint: typescript-eslint's type-checked recommended rules over the service, its tests, the
// browser client and the dashboard; plain recommended rules over the JavaScript scripts (bench,
// builds, CI). Every rule switched off or tuned says why beside it.
import js from '@eslint/js'
import tseslint from 'typescript-eslint'
import globals from 'globals'

export default tseslint.config(
  { ignores: ['dist/**', 'coverage/**', '.cache/**', '.tap/**', 'bench/out/**', 'node_modules/**'] },
  js.configs.recommended,
  {
    files: ['**/*.ts', '**/*.tsx'],
    extends: [...tseslint.configs.recommendedTypeChecked],
    languageOptions: {
      parserOptions: {
        project: ['./src/client/tsconfig.json', './src/dashboard/tsconfig.json', './tsconfig.lint.json'],
        tsconfigRootDir: import.meta.dirname,
      },
    },
    rules: {
      // option objects and interfaces declare their callbacks in method syntax (`onError(err): void`)
      // and pass them on; the rule cannot tell those from class methods that need their `this`
      '@typescript-eslint/unbound-method': 'off',
      // the hot paths write `(x = y), (changed = true)` to keep a compare-and-set on one line
      '@typescript-eslint/no-unused-expressions': 'off',
      // implementations of async interfaces (the log, group listeners) stay async without awaiting,
      // so that a throw reaches the caller as a rejection like every other failure
      '@typescript-eslint/require-await': 'off',
      // numbers, arrays of them and booleans read well in messages; objects and unknowns still do not
      '@typescript-eslint/restrict-template-expressions': ['error', { allowNumber: true, allowBoolean: true, allowArray: true, allowNullish: true }],
      // Preact's event handlers may be async (the dashboard's forms); each catches its own errors
      '@typescript-eslint/no-misused-promises': ['error', { checksVoidReturn: { attributes: false } }],
      // a failure caught as `unknown` is passed on as it came, neither wrapped nor guessed at
      '@typescript-eslint/prefer-promise-reject-errors': ['error', { allowThrowingUnknown: true }],
      '@typescript-eslint/only-throw-error': ['error', { allowThrowingUnknown: true }],
      // `_`-prefixed names are the ones a destructuring leaves out on purpose
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', destructuredArrayIgnorePattern: '^_' }],
    },
  },
  {
    files: ['**/*.mjs', '**/*.js'],
    languageOptions: { globals: { ...globals.node } },
    rules: {
      'no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
  {
    files: ['src/**/*.test.ts', 'test/**/*.ts'],
    rules: {
      // tap queues subtests itself: `t.test(...)` is awaited by tap, not by the caller
      '@typescript-eslint/no-floating-promises': 'off',
      // tap callbacks are async so that a subtest may await; many happen not to
      '@typescript-eslint/require-await': 'off',
      // tests read the service's JSON answers untyped on purpose: a wrong shape fails an assertion
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      // browser tests hand functions and strings to the page, where its own globals (window.goalpost) live
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-implied-eval': 'off',
    },
  },
)
