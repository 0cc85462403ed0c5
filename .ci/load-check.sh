#!/usr/bin/env bash
# Runs test files with two CPU hogs beside them: a test that waits on conditions passes on a busy
# machine too, one that waits a fixed time or asserts a latency does not. The hogs are busy Node
# loops (one per core of the 2-core CI machine), started before vitest and killed on any exit.
#
#   .ci/load-check.sh                      the files that used to fail under load and pass alone
#   .ci/load-check.sh FILE...              those files instead
#   LOAD_CHECK_TALLY=T .ci/load-check.sh   counts the pass into .ci/run's tally (as `under-load`)
#                                          (a skipped test fails the check either way)
#   LOAD_CHECK_HOGS=N                      N hogs instead of 2
#   LOAD_CHECK_MEMORY_MIB=M                a test process above M MiB RSS (default 4096) is killed
#
# A test process that grows without bound would take the shared machine with it (the kernel's OOM
# killer picks whatever is largest): .ci/memory-watch.sh kills one above the bound, after asking it for
# a Node diagnostic report (JavaScript and native stacks: where it is stuck) in a directory it names.
set -euo pipefail
cd "$(dirname "$0")/.."

files=(
  test/commands/control-matrix.test.ts
  test/e2e/stop.test.ts
  test/e2e/policy-compile-budget.test.ts
  test/e2e/missions-integrity.test.ts
  test/deploy/clickhouse-bootstrap.test.ts
)
[ "$#" -gt 0 ] && files=("$@")

hogs=()
stop_hogs() {
  for pid in "${hogs[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${hogs[@]}"; do wait "$pid" 2>/dev/null || true; done
}
trap stop_hogs EXIT
trap 'exit 130' INT TERM

for _ in $(seq 1 "${LOAD_CHECK_HOGS:-2}"); do
  node -e 'for (;;);' &
  hogs+=("$!")
done
echo "== under load: ${#hogs[@]} CPU hogs (pids ${hogs[*]}) beside ${#files[@]} test files, $(nproc) cores"

started=$SECONDS
status=0
# SIGPWR: unused by the project (the simulator's e-stop button is SIGUSR1/SIGUSR2), and a process
# without the report handler just ends.
reports="$(mktemp -d /tmp/fleetgw-load-check-reports.XXXXXX)"
export NODE_OPTIONS="${NODE_OPTIONS:-} --report-on-signal --report-signal=SIGPWR --report-directory=$reports"
.ci/memory-watch.sh "$$" "${LOAD_CHECK_MEMORY_MIB:-4096}" "$reports" SIGPWR &
# The pass's counts go to .ci/run's tally, or to a file of its own: a skipped test fails the check too
# (what it is there to show did not run).
tally="${LOAD_CHECK_TALLY:-}"
own_tally=""
if [ -z "$tally" ]; then
  own_tally="$(mktemp /tmp/fleetgw-load-check.XXXXXX)"
  tally="$own_tally"
fi
node .ci/tally.mjs run under-load "$tally" "${files[@]}" || status=$?
read -r _ _ _ skipped < <(grep '^under-load ' "$tally" | tail -n 1)
[ -n "$own_tally" ] && rm -f "$own_tally"
if [ "${skipped:-0}" -gt 0 ]; then
  echo "== under load: $skipped test(s) skipped: the check fails"
  [ "$status" -eq 0 ] && status=1
fi
echo "== under load: vitest exited $status after $((SECONDS - started)) s"
# Reports are kept only when a process was killed for memory.
rmdir "$reports" 2>/dev/null || echo "== under load: diagnostic reports of processes killed for memory in $reports"
exit "$status"
