// Table cells the message lists share.
import { h } from './dom.js';

/** A message id linking to its page: the lineage across producer, broker and consumers. */
export function messageLink(messageId) {
  return h('a', { href: `#/messages/${encodeURIComponent(messageId)}`, title: `Open message ${messageId}` }, messageId);
}

/** The first line of an error, shortened: the list shows the cause, the message page the whole text. */
export function errorCell(text) {
  return h('span', { class: 'error-text' }, firstLine(text));
}

function firstLine(text) {
  if (!text) return '';
  const line = String(text).split('\n', 1)[0];
  return line.length > 160 ? `${line.slice(0, 160)}…` : line;
}
