/* The console's charts: uPlot (vendor.js, static/package.json) on the figures model.js keeps.
 * Each chart is a <figure> with its caption and, under the plot, the last values in words: the
 * plot is never the only way to read them. Series differ by dash as well as colour, and the
 * legend names them. */

// uPlot, set by `start` (main.js); without it (a failed vendor.js) the charts are their words.
var Plot = null;
// Colour and dash of the series, in order: each pair apart from the others without colour.
var STROKES = [
  ['#0b63ce', []],
  ['#c2410c', [8, 4]],
  ['#15803d', [2, 3]],
  ['#7c3aed', [12, 4, 2, 4]],
];
var CHART_HEIGHT = 180;

/** The last value of `values` that is known, or null. */
function lastKnown(values) {
  for (var i = (values || []).length - 1; i >= 0; i--) if (values[i] !== null && values[i] !== undefined) return values[i];
  return null;
}

/** A chart titled `title` of the series `names`, added to `holder`: `update([times, …values])`
 *  draws it (times in unix seconds, one array per name), `resize()` follows the holder's width.
 *  With `windowSec`, the time axis spans that long up to the last time (the live charts: 30
 *  minutes from the first read on). */
function makeChart(holder, title, names, unit, windowSec) {
  var plot = h('div', { class: 'plot', role: 'img', 'aria-label': title });
  var words = h('p', { class: 'last' });
  var fig = h('figure', { class: 'chart' }, [h('figcaption', { text: title }), plot, words]);
  holder.appendChild(fig);
  var u = null;
  function width() {
    return Math.max(240, plot.clientWidth || holder.clientWidth || 320);
  }
  function options(fg) {
    var axis = { stroke: fg, grid: { stroke: 'rgba(128,128,128,0.25)' }, ticks: { stroke: 'rgba(128,128,128,0.4)' } };
    return {
      width: width(),
      height: CHART_HEIGHT,
      scales: {
        x: windowSec
          ? {
              time: true,
              range: function (u, min, max) {
                return [max - windowSec, max];
              },
            }
          : { time: true },
      },
      axes: [axis, Object.assign({ size: 56 }, axis)],
      series: [{ label: 'time' }].concat(
        names.map(function (n, i) {
          var s = STROKES[i % STROKES.length];
          return { label: n, stroke: s[0], dash: s[1], width: 2, points: { show: false } };
        })
      ),
    };
  }
  function update(data) {
    var empty = !data[0].length;
    plot.hidden = empty;
    if (empty) {
      words.textContent = 'Nothing counted yet.';
      return;
    }
    words.textContent =
      'Last: ' +
      names
        .map(function (n, i) {
          return n + ' ' + formatRate(lastKnown(data[i + 1]));
        })
        .join(', ') +
      (unit ? ' (' + unit + ')' : '');
    if (!Plot) return;
    if (u) {
      u.setData(data);
      return;
    }
    var fg = '#555';
    try {
      fg = D.defaultView.getComputedStyle(D.body).color || fg;
    } catch (e) {
      // The default grey reads on both schemes.
    }
    u = new Plot(options(fg), data, plot);
  }
  return {
    el: fig,
    update: update,
    resize: function () {
      if (u) u.setSize({ width: width(), height: CHART_HEIGHT });
    },
    destroy: function () {
      if (u) u.destroy();
      u = null;
    },
  };
}
