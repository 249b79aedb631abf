/**
 * The outbox table a user writes for the naive relay, beside (not in) Surety's tables: an id, the
 * message id, topic, payload, times, and a partial index on what is still to send.
 */
import type pg from 'pg';
import { PAYLOAD, TYPE } from './config.js';

export const naiveTable = (schema: string) => `"${schema}".naive_outbox`;

export async function createNaiveOutbox(pool: pg.Pool, schema: string): Promise<void> {
  const t = naiveTable(schema);
  await pool.query(`CREATE TABLE ${t} (
    id BIGSERIAL PRIMARY KEY,
    message_id UUID NOT NULL UNIQUE DEFAULT gen_random_uuid(),
    topic TEXT NOT NULL,
    payload JSONB NOT NULL,
    created_at TIMESTAMPTZ NOT NULL DEFAULT now(),
    sent_at TIMESTAMPTZ)`);
  await pool.query(`CREATE INDEX ON ${t} (id) WHERE sent_at IS NULL`);
}

/** Empties the table and adds `n` pending rows. */
export async function fillNaiveOutbox(pool: pg.Pool, schema: string, n: number): Promise<void> {
  const t = naiveTable(schema);
  await pool.query(`TRUNCATE ${t}`);
  await pool.query(`INSERT INTO ${t} (topic, payload) SELECT $1, $2::jsonb FROM generate_series(1, $3)`, [
    TYPE,
    JSON.stringify(PAYLOAD),
    n,
  ]);
}
