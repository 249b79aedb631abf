import { h, s, time } from './dom.js';

const WIDTH = 600;
const HEIGHT = 120;

/**
 * Throughput of the last hour as SVG bars: per minute, sent (relay confirms) and consumed (inbox records) side by
 * side. Plain attributes only (no inline styles), so it renders under a strict CSP; colours come from the stylesheet.
 */
export function throughputChart(buckets) {
  const max = Math.max(1, ...buckets.flatMap((b) => [b.sent, b.consumed]));
  const slot = WIDTH / Math.max(1, buckets.length);
  const bar = Math.max(1, slot / 2 - 1);
  const sent = buckets.reduce((n, b) => n + b.sent, 0);
  const consumed = buckets.reduce((n, b) => n + b.consumed, 0);
  const label = `Throughput, last ${buckets.length} minutes: ${sent} sent, ${consumed} consumed; busiest minute ${max}.`;
  const bars = buckets.flatMap((b, i) => [
    rect(i * slot, b.sent, max, bar, 'bar-sent', `${time(b.minute)}: ${b.sent} sent`),
    rect(i * slot + bar, b.consumed, max, bar, 'bar-consumed', `${time(b.minute)}: ${b.consumed} consumed`),
  ]);
  return h(
    'figure',
    { class: 'chart' },
    s(
      'svg',
      { viewBox: `0 0 ${WIDTH} ${HEIGHT + 1}`, role: 'img', 'aria-label': label, preserveAspectRatio: 'none' },
      s('line', { x1: 0, y1: HEIGHT, x2: WIDTH, y2: HEIGHT, class: 'axis' }),
      bars,
    ),
    h(
      'figcaption',
      {},
      h('span', { class: 'key key-sent' }, 'sent'),
      ' ',
      h('span', { class: 'key key-consumed' }, 'consumed'),
      ` per minute, busiest ${max}. ${label}`,
    ),
  );
}

function rect(x, value, max, width, className, title) {
  const height = value === 0 ? 0 : Math.max(1, (value / max) * HEIGHT);
  return s(
    'rect',
    {
      x: x.toFixed(2),
      y: (HEIGHT - height).toFixed(2),
      width: width.toFixed(2),
      height: height.toFixed(2),
      class: className,
    },
    s('title', {}, title),
  );
}
