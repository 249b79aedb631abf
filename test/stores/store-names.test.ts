import { describe, expect, it } from 'vitest';
import { openOutboxStore, openStore } from '../../src/stores/open-store.js';
import { createMysqlOutboxStore, createMysqlStore } from '../../src/stores/mysql/index.js';
import { createPostgresOutboxStore, createPostgresStore } from '../../src/stores/postgres/index.js';
import { createSqliteOutboxStore, createSqliteStore } from '../../src/stores/sqlite/index.js';

describe('store names', () => {
  it('keeps the old factory names as aliases of the new ones', () => {
    expect(createPostgresOutboxStore).toBe(createPostgresStore);
    expect(createMysqlOutboxStore).toBe(createMysqlStore);
    expect(createSqliteOutboxStore).toBe(createSqliteStore);
    expect(openOutboxStore).toBe(openStore);
  });

  it('opens a store made of one object per concern', async () => {
    const store = await openStore({ url: 'sqlite::memory:' });
    try {
      await store.migrate();
      expect(store.dialect).toBe('sqlite');
      expect(Object.isFrozen(store)).toBe(true);
      for (const concern of ['outbox', 'inbox', 'deadLetters', 'versionGuards', 'heartbeats', 'admin'] as const)
        expect(store[concern], concern).toBeTypeOf('object');
      // Each concern has its own operations only: the admin's are not on the outbox, nor the outbox's on the admin.
      expect('listOutbox' in store.outbox).toBe(false);
      expect('claim' in store.admin).toBe(false);
      expect(await store.heartbeats.relays()).toEqual([]);
      expect((await store.outbox.stats()).pending).toBe(0);
    } finally {
      await store.close();
    }
  });
});
