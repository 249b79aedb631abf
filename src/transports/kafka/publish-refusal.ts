import { PublishError, describeError } from '../../core/errors.js';
import { hasApiId } from './topology.js';

/** Broker errors that say this message can never be written as it is: retrying will not help. */
const UNROUTABLE = [
  'UNKNOWN_TOPIC_OR_PARTITION',
  'TOPIC_AUTHORIZATION_FAILED',
  'CLUSTER_AUTHORIZATION_FAILED',
  'TRANSACTIONAL_ID_AUTHORIZATION_FAILED',
  'MESSAGE_TOO_LARGE',
  'RECORD_LIST_TOO_LARGE',
  'INVALID_TOPIC_EXCEPTION',
  'INVALID_RECORD',
] as const;

/** The client's network and timeout error codes (`PLT_KFK_*`), found anywhere in the error. */
function hasCode(err: unknown, code: string, depth = 6): boolean {
  if (depth < 0 || err === null || typeof err !== 'object') return false;
  if ((err as { code?: unknown }).code === code) return true;
  const nested = (err as { errors?: unknown }).errors;
  if (Array.isArray(nested) && nested.some((e) => hasCode(e, code, depth - 1))) return true;
  return hasCode((err as { cause?: unknown }).cause, code, depth - 1);
}

/**
 * Translates a failed produce into a PublishError by the client's and the broker's error codes,
 * never by message text: refusals are SURETY_PUBLISH_UNROUTABLE, a lost connection
 * SURETY_CONNECTION_LOST, a timeout SURETY_PUBLISH_TIMEOUT, anything else (not enough in-sync
 * replicas, a leader change) SURETY_PUBLISH_NACKED.
 */
export function publishErrorOf(err: unknown, topic: string): PublishError {
  const detail = describeError(err);
  // The client answers a metadata error 3 (unknown topic) with a UserError of its own, without the
  // broker's code; its other user errors are invalid records. Neither succeeds on a retry.
  const refusal =
    UNROUTABLE.find((apiId) => hasApiId(err, apiId)) ?? (hasCode(err, 'PLT_KFK_USER') && 'refused by the client');
  if (refusal)
    return new PublishError('SURETY_PUBLISH_UNROUTABLE', `Kafka refused the message to ${topic} (${refusal})`, {
      cause: err,
    });
  if (hasCode(err, 'PLT_KFK_NETWORK'))
    return new PublishError('SURETY_CONNECTION_LOST', `lost the connection to Kafka: ${detail}`, { cause: err });
  if (hasCode(err, 'PLT_KFK_TIMEOUT'))
    return new PublishError('SURETY_PUBLISH_TIMEOUT', `Kafka did not acknowledge in time: ${detail}`, { cause: err });
  return new PublishError('SURETY_PUBLISH_NACKED', `Kafka did not acknowledge the message to ${topic}: ${detail}`, {
    cause: err,
  });
}
