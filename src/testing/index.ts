/**
 * `surety/testing`: what an adapter's or a user's own tests need. The conformance suites register
 * with the runner you give them and assert with node:assert, so they run under Vitest or Jest.
 */
export * from './transport-conformance/index.js';
