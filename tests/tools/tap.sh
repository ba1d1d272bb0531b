# shellcheck shell=bash
# TAP helpers for the tools' test scripts: ok/not ok lines, a skip, the plan
# at the end. Source from a script that has cd'ed to the tree's top.
# Tools under test: $TOOLS_BIN (default build/bin).
set -u
n=0 failed=0
B=${TOOLS_BIN:-build/bin}
ok() { n=$((n + 1)); echo "ok $n - $*"; }
notok() { n=$((n + 1)); failed=$((failed + 1)); echo "not ok $n - $*"; }
skip() { n=$((n + 1)); echo "ok $n - # SKIP $*"; }
# check DESC CMD...: ok when CMD succeeds
check() { local d=$1; shift; if "$@" >/dev/null; then ok "$d"; else notok "$d"; fi; }
# status WANT DESC CMD...: ok when CMD exits WANT; its stderr is kept in $err
status() {
	local want=$1 d=$2 got
	shift 2
	err=$("$@" 2>&1 >/dev/null)
	got=$?
	if [ "$got" -eq "$want" ]; then ok "$d (exit $got)"; else notok "$d: exit $got, expected $want; stderr: $err"; fi
}
# oneline: the last captured stderr is exactly one line
oneline() { [ -n "$err" ] && [ "$(printf '%s\n' "$err" | wc -l)" -eq 1 ]; }
done_testing() { echo "1..$n"; [ "$failed" -eq 0 ]; }
