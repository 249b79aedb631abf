import { h, timeWithAge } from './dom.js';

const PLACES = ['producer', 'broker', 'consumer'];

/** The doctor's report: the verdict and next step first, then each place's checks (producer, broker, consumer). */
export function doctorReport(report) {
  const v = report.verdict;
  return [
    h(
      'div',
      { class: `verdict verdict-${v.level}`, role: 'region', 'aria-label': 'Verdict' },
      h('p', {}, h('strong', {}, 'Verdict: '), h('span', { class: `badge badge-${v.level}` }, v.level), ' ', v.message),
      h('p', {}, h('strong', {}, 'Next step: '), v.nextStep),
      h('p', { class: 'as-of' }, 'As of ', timeWithAge(report.at), ' (checked every 10 s).'),
    ),
    PLACES.map((place) => {
      const checks = report.checks.filter((c) => c.place === place);
      if (!checks.length) return null;
      return [
        h('h3', {}, place),
        h(
          'ul',
          { class: 'checks', 'aria-label': `${place} checks` },
          checks.map((c) =>
            h(
              'li',
              {},
              h('span', { class: `badge badge-${c.level}` }, c.level),
              ' ',
              c.message,
              c.nextStep && c.level !== 'ok' ? h('div', { class: 'next-step' }, `Next: ${c.nextStep}`) : null,
            ),
          ),
        ),
      ];
    }),
  ];
}
