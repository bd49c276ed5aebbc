#!/usr/bin/env bash
# Rebuilds src/gradviz/ui/autograd/assets/code_editor.min.js, the Autograd page's program
# editor: its source (code_editor.js beside it) bundled with CodeMirror 6 into one minified
# ES module. Needs Node.js and npm (the packages come from the npm registry into a scratch
# folder); not run by CI: the bundle is committed. After a rebuild, update the versions in
# codemirror.LICENSE beside the bundle (this script prints them).
#
#   scripts/build_code_editor.sh            # the pinned versions below
#   WORK=/tmp/cm scripts/build_code_editor.sh
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
ASSETS="$ROOT/src/gradviz/ui/autograd/assets"
WORK="${WORK:-$(mktemp -d)}"
PACKAGES=(
  @codemirror/state@6.7.6
  @codemirror/view@6.43.15
  @codemirror/commands@6.11.1
  @codemirror/language@6.13.1
  @codemirror/lang-python@6.2.1
  @codemirror/theme-one-dark@6.1.3
  @codemirror/autocomplete@6.20.4
  esbuild@0.28.2
)
npm install --prefix "$WORK" --no-audit --no-fund "${PACKAGES[@]}"
cp "$ASSETS/code_editor.js" "$WORK/code_editor.js"
"$WORK/node_modules/.bin/esbuild" "$WORK/code_editor.js" --bundle --minify --format=esm \
  --target=es2020 --legal-comments=none --outfile="$ASSETS/code_editor.min.js"
echo "bundled: $(wc -c < "$ASSETS/code_editor.min.js") bytes"
echo "versions (for codemirror.LICENSE):"
(cd "$WORK" && for d in node_modules/@codemirror/* node_modules/@lezer/* node_modules/@marijn/* node_modules/style-mod \
  node_modules/w3c-keyname node_modules/crelt; do
  node -p "const p = require('./$d/package.json'); p.name + ' ' + p.version + ' (' + p.license + ')'"
done)
