/** Names of the stores a console serves (the `stores` option, the config's `databases`): a letter, then letters, digits, `_` or `-`; at most 40. */
export const STORE_NAME = /^[a-z][a-z0-9_-]{0,39}$/i;
export const STORE_NAME_RULE = 'must be a store name: a letter, then letters, digits, _ or -, at most 40 characters';

/** The name a single `store` option (or the config's single `database`) is served under. */
export const DEFAULT_STORE_NAME = 'default';
