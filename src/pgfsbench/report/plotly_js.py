"""plotly.js for the end of the report's <body>: the library inlined once, packed, and the
script that draws every chart div from its JSON spec (see charts.Chart.html).

The library is a partial plotly.js bundle with only the trace types the charts draw
(``vendor/plotly-scatter-bar.min.js``: how it is built, from which pinned version, and its
checksum are in ``vendor/README.md``), about a fifth of the full 4.8 MB bundle. It is
inlined gzip-compressed and base64-encoded, and the page unpacks it with the browser's own
DecompressionStream before evaluating it: the same library, a third of the bytes again.
Nothing is fetched: the report still opens offline, from a file:// URL.
"""

from __future__ import annotations

import base64
import gzip
from functools import cache
from pathlib import Path

BUNDLE = Path(__file__).parent / "vendor" / "plotly-scatter-bar.min.js"
# The trace types the bundle registers. A chart with another type would be drawn as a
# scatter by plotly.js, silently: tests check every chart's traces against this.
BUNDLED_TRACES = frozenset({"scatter", "bar"})


@cache
def plotly_bundle() -> bytes:
    """The vendored partial plotly.js, as built (minified JavaScript)."""
    return BUNDLE.read_bytes()


@cache
def packed_bundle() -> str:
    """The bundle gzip-compressed (no timestamp: the same report for the same results)
    and base64-encoded, so it fits in a JavaScript string."""
    return base64.b64encode(gzip.compress(plotly_bundle(), compresslevel=9, mtime=0)).decode(
        "ascii"
    )


# Sets window.plotlyReady: a promise of Plotly. The packed library is decoded, unpacked
# with DecompressionStream (no library of our own for it: every browser since 2023 has
# one) and run as a script of the page, as if it had been inlined as it is. A browser
# without DecompressionStream gets a rejected promise: each chart then says why it is
# not drawn (CHARTS_INIT_JS), and the rest of the page reads as before.
_LOADER = """window.plotlyReady = (function (packed) {
  if (!window.DecompressionStream) {
    return Promise.reject(new Error("this browser cannot unpack the charts' library "
      + "(it needs DecompressionStream: Chrome 80, Firefox 113, Safari 16.4 or later)"));
  }
  var text = atob(packed), bytes = new Uint8Array(text.length);
  for (var i = 0; i < text.length; i++) bytes[i] = text.charCodeAt(i);
  var stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
  return new Response(stream).text().then(function (code) {
    var script = document.createElement("script");
    script.textContent = code;
    document.head.appendChild(script);  // runs now, in the page's global scope
    if (!window.Plotly) throw new Error("plotly.js did not load");
    return window.Plotly;
  });
})("@PACKED@");
"""


@cache
def plotly_js() -> str:
    """The script that loads the packed library: about 0.47 MB (base64 is ASCII without
    "<", so nothing in it can close the <script> element early)."""
    return _LOADER.replace("@PACKED@", packed_bundle())


# Draws each .chart div once the page is parsed and the library loaded: the spec is the
# JSON script "<id>-spec"; the width is the container's (phone to wide screen). plotly's
# {responsive: true} follows only window resizes, so a ResizeObserver also redraws a
# chart whose container changed (a scrollbar appearing, a section opened, a layout
# column): a chart that fails shows why instead of a blank box.
# On a narrow chart (a phone) plotly's mode bar, which a tap shows over the legend, is
# left out: pinch and drag still zoom, a double tap resets. On a wider one it stands
# upright (charts.layout) in a right margin widened by TOOLBAR px, clear of the legend
# and of the plot. Both follow the chart's width when it crosses NARROW (a phone turned
# sideways).
CHARTS_INIT_JS = """
(function () {
  var NARROW = 600, TOOLBAR = 36;
  var ready = window.plotlyReady || Promise.resolve(window.Plotly);
  var parsed = new Promise(function (resolve) {
    if (document.readyState === "loading") {
      document.addEventListener("DOMContentLoaded", resolve);
    } else {
      resolve();
    }
  });
  function narrow(el) { return el.clientWidth > 0 && el.clientWidth < NARROW; }
  function config(el) {
    return {responsive: true, displaylogo: false, displayModeBar: narrow(el) ? false : "hover",
      modeBarButtonsToRemove: ["select2d", "lasso2d"],
      toImageButtonOptions: {filename: el.id}};
  }
  // The spec's layout, with room for the toolbar where it shows.
  function fitted(el, layout) {
    var margin = Object.assign({}, el._pgfsMargin);
    if (!narrow(el)) margin.r = (margin.r || 0) + TOOLBAR;
    return Object.assign(layout, {margin: margin});
  }
  function failed(el, err) {
    el.textContent = "This chart could not be drawn: " + (err && err.message || err);
    console.error(err);
  }
  function draw(Plotly) {
    var resize = window.ResizeObserver && new ResizeObserver(function (entries) {
      entries.forEach(function (e) {
        var el = e.target;
        if (!el._fullLayout || e.contentRect.width <= 0) return;
        if (narrow(el) !== el._pgfsNarrow) {
          el._pgfsNarrow = narrow(el);
          Plotly.react(el, el.data, fitted(el, el.layout), config(el));
        } else {
          Plotly.Plots.resize(el);
        }
      });
    });
    document.querySelectorAll("div.chart").forEach(function (el) {
      try {
        var spec = JSON.parse(document.getElementById(el.id + "-spec").textContent);
        el._pgfsNarrow = narrow(el);
        el._pgfsMargin = spec.layout.margin || {};
        var drawn = Plotly.newPlot(el, spec.data, fitted(el, spec.layout), config(el));
        if (drawn && drawn.catch) drawn.catch(function (err) { failed(el, err); });
        if (resize) resize.observe(el);
      } catch (err) {
        failed(el, err);
      }
    });
  }
  Promise.all([ready, parsed]).then(function (got) { draw(got[0]); }, function (err) {
    document.querySelectorAll("div.chart").forEach(function (el) { failed(el, err); });
  });
})();
"""
