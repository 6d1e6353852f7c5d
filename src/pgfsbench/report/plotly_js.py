"""plotly.js for the end of the report's <body>: the library inlined once, and the script that
draws every chart div from its JSON spec (see charts.Chart.html)."""

from __future__ import annotations

from functools import cache


@cache
def plotly_js() -> str:
    """plotly.min.js as the pinned plotly package ships it (about 4.8 MB; no network)."""
    from plotly.offline import get_plotlyjs

    # Inline in a <script>: nothing in it may close the element early.
    return get_plotlyjs().replace("</script", "<\\/script")


# Draws each .chart div once the page is parsed: the spec is the JSON script
# "<id>-spec"; the width is the container's (phone to wide screen). plotly's
# {responsive: true} follows only window resizes, so a ResizeObserver also
# redraws a chart whose container changed (a scrollbar appearing, a section
# opened, a layout column): a chart that fails shows why instead of a blank box.
CHARTS_INIT_JS = """
document.addEventListener("DOMContentLoaded", function () {
  var resize = window.ResizeObserver && new ResizeObserver(function (entries) {
    entries.forEach(function (e) {
      if (e.target._fullLayout && e.contentRect.width > 0) Plotly.Plots.resize(e.target);
    });
  });
  document.querySelectorAll("div.chart").forEach(function (el) {
    try {
      var spec = JSON.parse(document.getElementById(el.id + "-spec").textContent);
      Plotly.newPlot(el, spec.data, spec.layout, {responsive: true, displaylogo: false,
        modeBarButtonsToRemove: ["select2d", "lasso2d"],
        toImageButtonOptions: {filename: el.id}});
      if (resize) resize.observe(el);
    } catch (err) {
      el.textContent = "This chart could not be drawn: " + err;
      console.error(err);
    }
  });
});
"""
