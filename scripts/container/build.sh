#!/usr/bin/env bash
# The container's build step (Dockerfile, stage `build`), which test/package/package.test.ts also
# runs: from a checkout whose dependencies are installed (`npm ci`), makes
#   OUT/sluice-<version>.tgz          the package as `npm pack` makes it (its prepack builds dist/),
#   OUT/sluice-limiter-<version>.tgz  the workspace packages @sluice/limiter and @sluice/client, each
#   OUT/sluice-client-<version>.tgz   built by its own prepack (packages/*/package.json), and
#   OUT/app/                          a directory that runs sluice: the tarball's files, package-lock.json,
#                                     the production dependencies as installed here (so a native module,
#                                     better-sqlite3, is built once), the two workspace packages from
#                                     their tarballs, and entrypoint.sh.
set -euo pipefail
out=${1:?usage: scripts/container/build.sh OUT}
root=$(cd "$(dirname "$0")/../.." && pwd)
mkdir -p "$out"
out=$(cd "$out" && pwd)
cd "$root"

version=$(node -p "require('./package.json').version")
tarball="$out/sluice-$version.tgz"
libraries=(limiter client)
made=("$tarball")
for library in "${libraries[@]}"; do made+=("$out/sluice-$library-$version.tgz"); done
rm -f "${made[@]}"
# The build's own output goes to stderr: stdout stays free for whoever runs this.
npm pack --workspaces --include-workspace-root --pack-destination "$out" --no-audit --no-fund >&2
for file in "${made[@]}"; do
  [ -f "$file" ] || { echo "build.sh: npm pack made no $file" >&2; exit 1; }
done

app="$out/app"
rm -rf "$app"
mkdir -p "$app"
tar -xzf "$tarball" -C "$app" --strip-components=1
cp package-lock.json "$app/"
node scripts/container/copy-production-modules.mjs "$root" "$app"
# The workspace packages are links in the checkout's node_modules: installed from their tarballs.
for library in "${libraries[@]}"; do
  mkdir -p "$app/node_modules/@sluice/$library"
  tar -xzf "$out/sluice-$library-$version.tgz" -C "$app/node_modules/@sluice/$library" --strip-components=1
done
cp scripts/container/entrypoint.sh "$app/entrypoint.sh"
chmod 755 "$app/entrypoint.sh"
