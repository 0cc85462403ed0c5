#!/usr/bin/env bash
# Keeps a test run from taking the shared machine down: every 2 s it reads the RSS of every process
# under ROOT_PID, and one above LIMIT_MIB is sent SIGNAL (a Node process started with
# `--report-on-signal --report-signal=SIGNAL --report-directory=REPORT_DIR` writes a diagnostic report
# there, JavaScript and native stacks included), given 10 s to write it, then killed. Each kill is one
# line on stderr naming the process.
#
#   .ci/memory-watch.sh ROOT_PID LIMIT_MIB REPORT_DIR SIGNAL     runs until ROOT_PID exits
set -uo pipefail
root="$1"
limit_kb=$(( $2 * 1024 ))
reports="$3"
signal="$4"

descendants() {
  local p
  for p in $(cat /proc/"$1"/task/*/children 2>/dev/null); do
    echo "$p"
    descendants "$p"
  done
}

while kill -0 "$root" 2>/dev/null; do
  for pid in $(descendants "$root"); do
    rss=$(awk '/^VmRSS:/ { print $2 }' /proc/"$pid"/status 2>/dev/null)
    [ -n "$rss" ] && [ "$rss" -gt "$limit_kb" ] || continue
    cmd=$(tr '\0' ' ' < /proc/"$pid"/cmdline 2>/dev/null | cut -c1-300)
    kill -s "$signal" "$pid" 2>/dev/null
    sleep 10
    rss_now=$(awk '/^VmRSS:/ { print $2 }' /proc/"$pid"/status 2>/dev/null)
    kill -KILL "$pid" 2>/dev/null || continue
    echo "== memory watch: killed pid $pid at $(( ${rss_now:-$rss} / 1024 )) MiB RSS (limit $(( limit_kb / 1024 )) MiB): $cmd; diagnostic report (if it could write one): $reports" >&2
  done
  sleep 2
done
