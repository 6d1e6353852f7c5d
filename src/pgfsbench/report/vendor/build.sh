#!/bin/sh
# Rebuilds plotly-scatter-bar.min.js beside this script from the pinned npm packages
# (package.json, package-lock.json), in a scratch directory: nothing is installed here.
# Needs node and npm and the npm registry; the report itself never does (the built file is
# committed and installed with the package). `make plotly-bundle` runs it.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT INT TERM
cp "$here/package.json" "$here/package-lock.json" "$here/entry.js" "$here/build.mjs" "$work/"
cd "$work"
# --ignore-scripts: no package's install script runs (esbuild's binary comes as its
# optional platform package all the same).
npm ci --ignore-scripts --no-audit --no-fund --loglevel=error >npm.log 2>&1 ||
  { cat npm.log >&2; echo "build.sh: npm ci failed" >&2; exit 1; }
node build.mjs "$here/plotly-scatter-bar.min.js"
cd "$here"
echo "plotly-scatter-bar.min.js: $(wc -c <plotly-scatter-bar.min.js) bytes," \
  "gzip -9 $(gzip -9 -n -c plotly-scatter-bar.min.js | wc -c) bytes"
echo "sha256 $(sha256sum plotly-scatter-bar.min.js | cut -d' ' -f1)  (update README.md if it changed)"
