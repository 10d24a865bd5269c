#!/usr/bin/env bash
# The container's build step (Dockerfile, stage `build`), which test/package/package.test.ts also
# runs: from a checkout whose dependencies are installed (`npm ci`), makes
#   OUT/sluice-<version>.tgz  the package as `npm pack` makes it (its prepack builds dist/), and
#   OUT/app/                  a directory that runs sluice: the tarball's files, package-lock.json,
#                             the production dependencies as installed here (so a native module,
#                             better-sqlite3, is built once) and entrypoint.sh.
set -euo pipefail
out=${1:?usage: scripts/container/build.sh OUT}
root=$(cd "$(dirname "$0")/../.." && pwd)
mkdir -p "$out"
out=$(cd "$out" && pwd)
cd "$root"

version=$(node -p "require('./package.json').version")
tarball="$out/sluice-$version.tgz"
rm -f "$tarball"
# The build's own output goes to stderr: stdout stays free for whoever runs this.
npm pack --pack-destination "$out" --no-audit --no-fund >&2
[ -f "$tarball" ] || { echo "build.sh: npm pack made no $tarball" >&2; exit 1; }

app="$out/app"
rm -rf "$app"
mkdir -p "$app"
tar -xzf "$tarball" -C "$app" --strip-components=1
cp package-lock.json "$app/"
node scripts/container/copy-production-modules.mjs "$root" "$app"
cp scripts/container/entrypoint.sh "$app/entrypoint.sh"
chmod 755 "$app/entrypoint.sh"
