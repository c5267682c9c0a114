// Draws the charts of a module's page: every <div data-chart="key"> gets the
// ECharts option the page prepared under that key in a
// <script type="application/json" id="<name>-charts"> block. The element's
// aria-label and the table beside it carry the same numbers in words.
document.addEventListener('DOMContentLoaded', () => {
  const options = {};
  for (const block of document.querySelectorAll('script[type="application/json"][id$="-charts"]')) Object.assign(options, plinth.data(block.id) ?? {});
  const still = window.matchMedia('(prefers-reduced-motion: reduce)').matches;
  const charts = [];
  for (const el of document.querySelectorAll('[data-chart]')) {
    const option = options[el.dataset.chart];
    if (!option || typeof echarts === 'undefined') continue;
    const chart = echarts.init(el);
    chart.setOption({ animation: !still, ...option });
    charts.push(chart);
  }
  window.addEventListener('resize', () => charts.forEach((chart) => chart.resize()));
});
