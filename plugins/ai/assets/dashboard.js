// The AI dashboard's charts (ECharts): one bar chart per series the page lists
// in #ai-dashboard-charts. Each chart's container carries a text summary
// (aria-label) and a table follows it, so the chart itself is only a picture;
// a click on a bar opens the tasks it counts.
document.addEventListener('DOMContentLoaded', () => {
  const charts = plinth.data('ai-dashboard-charts') ?? [];
  const drawn = [];
  for (const chart of charts) {
    const el = document.getElementById(chart.id);
    if (!el || typeof echarts === 'undefined') continue;
    const instance = echarts.init(el, null, { renderer: 'svg' });
    instance.setOption({
      aria: { enabled: false },
      grid: { left: 40, right: 16, top: 16, bottom: 32 },
      tooltip: { trigger: 'axis' },
      xAxis: { type: 'category', data: chart.labels, axisLabel: { interval: 0 } },
      yAxis: { type: 'value', minInterval: 1 },
      series: [{ type: 'bar', name: chart.title, data: chart.values, itemStyle: { color: '#1f5fbf' } }],
    });
    instance.on('click', (params) => {
      const url = chart.urls[params.dataIndex];
      if (url) window.location.assign(url);
    });
    drawn.push(instance);
  }
  window.addEventListener('resize', () => drawn.forEach((c) => c.resize()));
});
