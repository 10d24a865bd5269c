#!/bin/sh
# The container's entrypoint (Dockerfile ENTRYPOINT), which test/package/package.test.ts also runs
# on the directory scripts/container/build.sh made: `sluice ARGS` from that directory, `serve`
# when no argument is given. `exec`, so the signals sent to the container reach sluice, which
# drains and stops on SIGTERM.
set -eu
app=$(cd "$(dirname "$0")" && pwd)
[ "$#" -gt 0 ] || set -- serve
exec node "$app/dist/cli/main.js" "$@"
