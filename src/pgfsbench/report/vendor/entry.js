// What the report's charts draw: plotly.js's core (the plot API, cartesian axes, legend,
// hover, zoom and pan, the mode bar, annotations, shapes, error bars, PNG export, and the
// scatter trace for lines and markers) and the bar trace. Nothing else: no maps, 3-D,
// WebGL, pie, box, heatmap, contour, table... A chart whose trace type is not here
// would be drawn as a scatter, so tests/unit/test_report_bundle.py checks every chart's
// types against BUNDLED_TRACES in report/plotly_js.py.
var Plotly = require('plotly.js/lib/core');

Plotly.register([require('plotly.js/lib/bar')]);

module.exports = Plotly;
