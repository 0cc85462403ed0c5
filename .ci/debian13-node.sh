#!/usr/bin/env bash
# Runs vitest on Node MAJOR inside a Debian 13 (trixie, glibc 2.41) root made with debootstrap: Node 24
# and later load the uWS build that needs glibc 2.38 (docs/uws-builds.md), which this Debian 12 host
# does not have. Needs root (debootstrap, mounts, chroot).
#
#   .ci/debian13-node.sh MAJOR TALLY [vitest args...]
#
# The root is made once and kept under .ci/cache/debian13-root (git-ignored; about 25 s and 200 MB). The
# project is bind-mounted at its own path, with /proc, /sys, /dev and a fresh /tmp, inside a private
# mount namespace (unshare -m): every mount ends with that namespace, on failure or kill -9 too, and
# the trap unmounts them in order on a normal exit. The chroot shares the host's network, so the tests
# use a ClickHouse server this script starts on the host's loopback (FLEETGW_TEST_CLICKHOUSE_URL).
set -euo pipefail
cd "$(dirname "$0")/.."
project="$PWD"
major="$1"
tally="$(realpath "$2")"
shift 2
cache="$project/.ci/cache"
root="$cache/debian13-root"
mirror="http://deb.debian.org/debian"

export DEBIAN_FRONTEND=noninteractive
if ! command -v debootstrap >/dev/null 2>&1; then
  echo "== installing debootstrap (Debian)"
  apt-get update -q
  apt-get install -y -q --no-install-recommends debootstrap
fi

if [ ! -f "$root/.fleetgw-root-ready" ]; then
  echo "== debootstrap trixie into $root"
  # Its own mount namespace: a debootstrap that fails leaves nothing mounted under the folder removed here.
  rm -rf "$root" "$root.partial"
  mkdir -p "$cache"
  # libatomic1: Node 25's binary links it.
  unshare -m --propagation private debootstrap --variant=minbase --include=ca-certificates,libatomic1 \
    trixie "$root.partial" "$mirror"
  touch "$root.partial/.fleetgw-root-ready"
  mv "$root.partial" "$root"
fi

node_bin="$(.ci/node-bin.sh "$major")"
node_dir="$(dirname "$(dirname "$node_bin")")"
want="$("$node_bin" --version 2>/dev/null || true)"
if [ ! -x "$root/opt/node$major/bin/node" ] || [ "$(cat "$root/opt/node$major/.version" 2>/dev/null)" != "$want" ]; then
  rm -rf "$root/opt/node$major"
  mkdir -p "$root/opt"
  cp -a "$node_dir" "$root/opt/node$major"
  printf '%s' "$want" > "$root/opt/node$major/.version"
fi

# A ClickHouse server for the tests, on the host (Debian's clickhouse-server; the root has none).
ch_dir="$(mktemp -d /tmp/fleetgw-ci-clickhouse.XXXXXX)"
ch_pid=""
cleanup() {
  [ -n "$ch_pid" ] && kill "$ch_pid" 2>/dev/null && wait "$ch_pid" 2>/dev/null
  rm -rf "$ch_dir"
}
trap cleanup EXIT
read -r ch_http ch_tcp < <(node -e '
  const net = require("node:net");
  const one = () => new Promise((r) => { const s = net.createServer().listen(0, "127.0.0.1", () => { const p = s.address().port; s.close(() => r(p)); }); });
  Promise.all([one(), one()]).then((p) => console.log(p.join(" ")));')
mkdir -p "$ch_dir/data" "$ch_dir/tmp"
cat > "$ch_dir/config.xml" <<XML
<?xml version="1.0"?>
<yandex>
  <logger><level>warning</level><log>$ch_dir/server.log</log><errorlog>$ch_dir/server.err.log</errorlog></logger>
  <http_port>$ch_http</http_port>
  <tcp_port>$ch_tcp</tcp_port>
  <listen_host>127.0.0.1</listen_host>
  <path>$ch_dir/data/</path>
  <tmp_path>$ch_dir/tmp/</tmp_path>
  <users_config>/etc/clickhouse-server/users.xml</users_config>
  <default_profile>default</default_profile>
  <default_database>default</default_database>
  <mark_cache_size>5368709120</mark_cache_size>
</yandex>
XML
(cd "$ch_dir" && exec /usr/sbin/clickhouse-server --config-file="$ch_dir/config.xml" 2>"$ch_dir/stderr") &
ch_pid=$!
for _ in $(seq 1 300); do
  curl -fsS "http://127.0.0.1:$ch_http/?query=SELECT%201" >/dev/null 2>&1 && break
  kill -0 "$ch_pid" 2>/dev/null || { echo "clickhouse-server exited: $(tail -5 "$ch_dir/stderr")"; exit 1; }
  sleep 0.1
done

echo "== vitest on Node $want in Debian 13 ($root): $*"
# The tally file is written from inside the root: pass it through the project's bind mount.
inner_tally="$project/.ci/cache/.tally-node$major"
rm -f "$inner_tally" "$inner_tally.failures"
set +e
unshare -m --propagation private bash -s -- "$root" "$project" "$major" "$ch_http" "$inner_tally" "$@" <<'INNER'
set -euo pipefail
root="$1"; project="$2"; major="$3"; ch_http="$4"; tally="$5"; shift 5
mounted=()
unmount_all() {
  local i
  for ((i = ${#mounted[@]} - 1; i >= 0; i--)); do umount -l "${mounted[$i]}" 2>/dev/null || true; done
}
trap unmount_all EXIT
bind() { mkdir -p "$2"; mount "${@:3}" "$1" "$2"; mounted+=("$2"); }
bind proc "$root/proc" -t proc
bind /sys "$root/sys" --rbind -o ro
bind /dev "$root/dev" --rbind
bind tmpfs "$root/tmp" -t tmpfs
bind "$project" "$root$project" --bind
# debootstrap leaves no /etc/hosts: tests (and TLS certificates) name localhost.
cp /etc/hosts "$root/etc/hosts"
cp /etc/resolv.conf "$root/etc/resolv.conf" 2>/dev/null || true
chroot "$root" /usr/bin/env -i PATH="/opt/node$major/bin:/usr/bin:/bin" HOME=/root TMPDIR=/tmp LANG=C.UTF-8 \
  CI="${CI:-}" FLEETGW_TEST_CLICKHOUSE_URL="http://127.0.0.1:$ch_http" \
  sh -c 'cd "$1" && shift && exec node .ci/tally.mjs run "$@"' sh "$project" "node$major-debian13" "$tally" "$@" </dev/null
INNER
status=$?
set -e
cat "$inner_tally" >> "$tally" 2>/dev/null || echo "node$major-debian13 0 1 0" >> "$tally"
cat "$inner_tally.failures" >> "$tally.failures" 2>/dev/null || true
rm -f "$inner_tally" "$inner_tally.failures"
exit "$status"
