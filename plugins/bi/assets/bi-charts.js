// ECharts options for the BI chart types (bar, line, area, pie, scatter,
// stacked bar, funnel, heat map) from an analytics answer (columns with their
// roles, rows keyed by column name) and a widget's chart settings, which may
// name the columns: { x, y: [..], series } for bars and lines, { name, value }
// for pies and funnels, { x, y, value } for heat maps, and colors, legend.
// Anything left out is taken from the columns: groups first, measures after.
// The name of a missing value comes from the page (bi-texts, in the user's
// language), read when the first chart is drawn; the English if it is missing.
(() => {
  const ENGLISH = { 'chart.none': '(none)' };
  let texts = null;
  const none = () => (texts ??= window.plinth?.data('bi-texts') ?? ENGLISH)['chart.none'] ?? ENGLISH['chart.none'];
  const list = (v) => (v === undefined || v === null ? [] : Array.isArray(v) ? v : [v]);
  const asNumber = (v) => (v === null || v === undefined || v === '' ? null : Number(v));
  const label = (v) => (v === null || v === undefined ? none() : String(v));

  function roles(columns, chart) {
    const byName = new Map(columns.map((c) => [c.name, c]));
    const known = (n) => (typeof n === 'string' && byName.has(n) ? n : undefined);
    const groups = columns.filter((c) => c.role !== 'measure').map((c) => c.name);
    const measures = columns.filter((c) => c.role === 'measure').map((c) => c.name);
    return { byName, known, groups, measures, colors: list(chart.colors ?? chart.color).filter((c) => typeof c === 'string') };
  }

  /** Unique values in their first order. */
  const uniques = (rows, name) => [...new Set(rows.map((r) => label(r[name])))];

  function cartesian(type, columns, rows, chart, r) {
    const x = r.known(chart.x) ?? r.groups[0] ?? columns[0]?.name;
    const series = r.known(chart.series) ?? (r.groups.length > 1 ? r.groups.find((g) => g !== x) : undefined);
    const ys = list(chart.y).filter(r.known);
    const measures = ys.length ? ys : r.measures.length ? r.measures : columns.filter((c) => c.name !== x).map((c) => c.name);
    const categories = uniques(rows, x);
    const kind = type === 'area' ? 'line' : type === 'stackedBar' ? 'bar' : type;
    const extra = { ...(type === 'area' ? { areaStyle: {} } : {}), ...(type === 'stackedBar' ? { stack: 'total' } : {}), ...(kind === 'line' ? { connectNulls: true } : {}) };
    let out;
    if (series) {
      const y = measures[0];
      const names = uniques(rows, series);
      out = names.map((name) => {
        const values = new Map(rows.filter((row) => label(row[series]) === name).map((row) => [label(row[x]), asNumber(row[y])]));
        return { name, type: kind, ...extra, data: categories.map((c) => values.get(c) ?? (type === 'stackedBar' ? 0 : null)) };
      });
    } else {
      out = measures.map((m) => ({ name: r.byName.get(m)?.label ?? m, type: kind, ...extra, data: rows.map((row) => asNumber(row[m])) }));
    }
    // two measures of different magnitude (a count beside an amount): the second gets an axis of its own
    const top = (s) => Math.max(0, ...s.data.filter((v) => v !== null).map(Math.abs));
    const [a, b] = out.length === 2 ? [top(out[0]), top(out[1])] : [0, 0];
    const twoAxes = !series && out.length === 2 && type !== 'stackedBar' && Math.max(a, b, 1) / Math.max(Math.min(a, b), 1) > 10;
    if (twoAxes) out[1].yAxisIndex = 1;
    return {
      tooltip: { trigger: 'axis' },
      legend: { show: chart.legend ?? out.length > 1, type: 'scroll', top: 0 },
      grid: { top: twoAxes ? 48 : out.length > 1 ? 32 : 16, left: 8, right: 16, bottom: 8 },
      xAxis: { type: 'category', data: categories, name: r.byName.get(x)?.label, nameLocation: 'middle', nameGap: 28, axisLabel: { hideOverlap: true } },
      yAxis: twoAxes
        ? [
            { type: 'value', name: out[0].name },
            { type: 'value', name: out[1].name, splitLine: { show: false } },
          ]
        : { type: 'value' },
      series: out,
    };
  }

  function pieOrFunnel(type, columns, rows, chart, r) {
    const name = r.known(chart.name) ?? r.known(chart.x) ?? r.groups[0] ?? columns[0]?.name;
    const value = r.known(chart.value) ?? list(chart.y).find(r.known) ?? r.measures[0];
    // an amount of money comes per currency: a slice names its currency
    const currency = r.byName.get(value)?.currency;
    const data = rows.map((row) => ({ name: currency && currency !== name ? `${label(row[name])} (${label(row[currency])})` : label(row[name]), value: asNumber(row[value]) }));
    const base = { name: r.byName.get(value)?.label ?? value, data };
    return {
      tooltip: { trigger: 'item' },
      legend: { show: chart.legend ?? true, type: 'scroll', bottom: 0 },
      series: [
        type === 'pie'
          ? { ...base, type: 'pie', radius: ['0%', '65%'], center: ['50%', '45%'] }
          : { ...base, type: 'funnel', sort: 'descending', top: 8, bottom: 32, left: '10%', width: '80%', label: { position: 'inside' } },
      ],
    };
  }

  function scatter(columns, rows, chart, r) {
    const x = r.known(chart.x) ?? (r.measures.length > 1 ? r.measures[0] : r.groups[0]) ?? columns[0]?.name;
    const y = list(chart.y).find(r.known) ?? r.measures.find((m) => m !== x) ?? r.measures[0];
    const numericX = r.byName.get(x)?.role === 'measure';
    return {
      tooltip: { trigger: 'item' },
      grid: { top: 16, left: 8, right: 16, bottom: 8 },
      xAxis: numericX ? { type: 'value', name: r.byName.get(x)?.label, nameLocation: 'middle', nameGap: 28 } : { type: 'category', data: uniques(rows, x) },
      yAxis: { type: 'value', name: r.byName.get(y)?.label },
      series: [{ type: 'scatter', name: r.byName.get(y)?.label ?? y, data: rows.map((row) => [numericX ? asNumber(row[x]) : label(row[x]), asNumber(row[y])]) }],
    };
  }

  function heatmap(columns, rows, chart, r) {
    const x = r.known(chart.x) ?? r.groups[0] ?? columns[0]?.name;
    const y = list(chart.y).find(r.known) ?? r.known(chart.series) ?? r.groups.find((g) => g !== x);
    const value = r.known(chart.value) ?? r.measures[0];
    const xs = uniques(rows, x);
    const ys = y ? uniques(rows, y) : [''];
    const data = rows.map((row) => [xs.indexOf(label(row[x])), y ? ys.indexOf(label(row[y])) : 0, asNumber(row[value])]);
    const values = data.map((d) => d[2]).filter((v) => v !== null);
    return {
      tooltip: { position: 'top' },
      grid: { top: 8, left: 8, right: 16, bottom: 72 },
      xAxis: { type: 'category', data: xs, splitArea: { show: true } },
      yAxis: { type: 'category', data: ys, splitArea: { show: true } },
      visualMap: { min: Math.min(0, ...values), max: Math.max(1, ...values), calculable: true, orient: 'horizontal', left: 'center', bottom: 0, itemWidth: 12, itemHeight: 120 },
      series: [{ type: 'heatmap', name: r.byName.get(value)?.label ?? value, data, label: { show: xs.length * ys.length <= 60 } }],
    };
  }

  /** The ECharts option of one chart. */
  function option(chartType, columns, rows, chart = {}) {
    const r = roles(columns, chart);
    let out;
    if (chartType === 'pie' || chartType === 'funnel') out = pieOrFunnel(chartType, columns, rows, chart, r);
    else if (chartType === 'scatter') out = scatter(columns, rows, chart, r);
    else if (chartType === 'heatmap') out = heatmap(columns, rows, chart, r);
    else out = cartesian(['bar', 'line', 'area', 'stackedBar'].includes(chartType) ? chartType : 'bar', columns, rows, chart, r);
    if (r.colors.length) out.color = r.colors;
    return { animation: false, ...out };
  }

  /** Draws a chart into `el` and keeps it fitted to its box; answers the ECharts instance, or null without ECharts. */
  function draw(el, chartType, columns, rows, chart) {
    if (typeof echarts === 'undefined') return null;
    const instance = echarts.getInstanceByDom(el) ?? echarts.init(el, null, { renderer: 'canvas' });
    instance.setOption(option(chartType, columns, rows, chart ?? {}), true);
    if (window.ResizeObserver && !el.dataset.observed) {
      el.dataset.observed = 'true';
      new window.ResizeObserver(() => instance.resize()).observe(el);
    }
    return instance;
  }

  window.biCharts = { option, draw };
})();
