// Bundles entry.js into one minified script that defines the global Plotly, the way
// plotly.js builds its own dist files (esbuild, an IIFE named Plotly, ES2016, `global`
// as `window`, the attributes' documentation strings left out), but with two trace types.
// Run by build.sh in a scratch directory holding node_modules; writes OUT.
import { build } from 'esbuild';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';

const OUT = process.argv[2] || 'plotly-scatter-bar.min.js';
const require = createRequire(import.meta.url);
const version = require('plotly.js/package.json').version;

// The attribute schema's prose (description, hrName, the valType option lists): what
// Plotly.PlotSchema prints for people, never read while drawing. plotly.js's own dist
// strips the same keys. Only plotly.js's own src/ files are rewritten.
const PROSE = [
  /\s*description: '.*',?/g,
  /\s*description: \[[\s\S]*?\]\.join\([\s\S]*?\),?/g,
  /\s*requiredOpts: \[[\s\S]*?\],?/g,
  /\s*otherOpts: \[[\s\S]*?\],?/g,
  /\s*hrName: '.*',?/g,
];
const stripProse = {
  name: 'strip-schema-prose',
  setup(b) {
    b.onLoad({ filter: /[\\/]plotly\.js[\\/]src[\\/].*\.js$/ }, async (args) => {
      let text = await readFile(args.path, 'utf8');
      for (const re of PROSE) text = text.replace(re, '');
      return { contents: text, loader: 'js' };
    });
  },
};

// plotly.js's registry asks for maplibre-gl's stylesheet when a map trace registers; none
// does here, so it is an empty module (esbuild would write it beside the bundle).
const noStylesheets = {
  name: 'no-stylesheets',
  setup(b) {
    b.onResolve({ filter: /\.css$/ }, (args) => ({ path: args.path, namespace: 'no-css' }));
    b.onLoad({ filter: /.*/, namespace: 'no-css' }, () => ({ contents: '', loader: 'js' }));
  },
};

await build({
  entryPoints: ['entry.js'],
  outfile: OUT,
  bundle: true,
  minify: true,
  format: 'iife',
  globalName: 'Plotly',
  target: 'es2016',
  platform: 'browser',
  define: { global: 'window', 'process.env.NODE_DEBUG': 'false' },
  plugins: [stripProse, noStylesheets],
  banner: { js: `/*! plotly.js v${version} (MIT, Copyright 2012-2026 Plotly, Inc.), a partial `
    + 'bundle for pgfsbench with the scatter and bar traces only: '
    + 'src/pgfsbench/report/vendor/README.md */' },
  footer: { js: 'window.Plotly = Plotly;' },
  logLevel: 'warning',
});
