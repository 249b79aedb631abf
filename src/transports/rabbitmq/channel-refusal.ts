/** What the broker said when it closed a channel (AMQP channel.close), as amqplib reports it. */
export interface ChannelRefusal {
  /** AMQP reply code: 404 NOT_FOUND, 403 ACCESS_REFUSED, 406 PRECONDITION_FAILED... */
  readonly replyCode: number;
  /** The broker's own words, e.g. `NOT_FOUND - no exchange 'orders' in vhost '/'`. */
  readonly replyText: string;
  /** The close answers a basic.publish: one publish on the channel caused it. */
  readonly byPublish: boolean;
  /** The exchange the reply names (404 and 403 on a publish), if it names one. */
  readonly exchange: string | undefined;
  readonly cause: unknown;
}

const BASIC_CLASS = 60;
const PUBLISH_METHOD = 40;

/**
 * The refusal in amqplib's channel 'error' event, or undefined when the error is not a channel.close
 * (the connection went). amqplib puts the reply code, class and method on the error and the reply
 * text only in its message (`... with message "<reply text>"`). RabbitMQ's reply texts are fixed
 * English, not localised; the exchange is read from them only to blame publishes cheaply, and a reply
 * that reads otherwise is handled as one that names nothing.
 */
export function channelRefusal(err: unknown): ChannelRefusal | undefined {
  if (typeof err !== 'object' || err === null) return undefined;
  const { code, classId, methodId, message } = err as Record<string, unknown>;
  if (typeof code !== 'number') return undefined;
  const text = typeof message === 'string' ? message : String(code);
  const replyText = /with message "(.*)"$/s.exec(text)?.[1] ?? text;
  const byPublish = classId === BASIC_CLASS && methodId === PUBLISH_METHOD;
  // 404 "no exchange 'x' in vhost 'v'"; 403 "cannot publish to internal exchange 'x' in vhost 'v'",
  // "access to exchange 'x' in vhost 'v' refused for user 'u'".
  const named = byPublish && (code === 404 || code === 403) ? /exchange '(.*)' in vhost '/s.exec(replyText) : null;
  return { replyCode: code, replyText, byPublish, exchange: named?.[1], cause: err };
}
