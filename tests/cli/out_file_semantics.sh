#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# What --out does to the file it names, for one command line (every command shares the writer):
#   sh out_file_semantics.sh CAPPLAN ARGS...      (ARGS: the command without --out)
# - through a symbolic link, the link's target is written and the link kept;
# - a link to standard output (/proc/self/fd/1) writes to what standard output is;
# - an existing file keeps its permission mode (0600 stays 0600);
# - a read-only file is refused (exit 2 naming --out and the path) and left as it was;
# - --out '' is refused (exit 2 naming --out), nothing written to standard output.
set -u
exe="$1"; shift
d=$(mktemp -d) || exit 1
trap 'rm -rf "$d"' EXIT
fail() { echo "FAIL ($*): $exe $* --out ..." >&2; ls -la "$d" >&2; exit 1; }

echo old > "$d/target.out"
ln -s target.out "$d/link.out"
"$exe" "$@" --out "$d/link.out" >/dev/null 2>"$d/err" || fail "symlink: exit $?: $(cat "$d/err")"
[ -L "$d/link.out" ] || fail "symlink: the link was replaced"
[ "$(readlink "$d/link.out")" = target.out ] || fail "symlink: the link points elsewhere"
[ -s "$d/target.out" ] && ! grep -qx old "$d/target.out" || fail "symlink: the target was not written"
[ -z "$(ls -A "$d" | grep -v -e '^target.out$' -e '^link.out$' -e '^err$')" ] || fail "symlink: files left behind"

ln -s /proc/self/fd/1 "$d/stdout.out"
"$exe" "$@" --out "$d/stdout.out" >"$d/result" 2>"$d/err" || fail "link to stdout: exit $?: $(cat "$d/err")"
[ -L "$d/stdout.out" ] || fail "link to stdout: the link was replaced"
[ -s "$d/result" ] || fail "link to stdout: standard output's file is empty"

echo old > "$d/private.out"; chmod 600 "$d/private.out"
"$exe" "$@" --out "$d/private.out" >/dev/null 2>"$d/err" || fail "mode: exit $?: $(cat "$d/err")"
[ "$(stat -c %a "$d/private.out")" = 600 ] || fail "mode: 0600 became $(stat -c %a "$d/private.out")"
grep -qx old "$d/private.out" && fail "mode: not written"

echo old > "$d/readonly.out"; chmod 444 "$d/readonly.out"
"$exe" "$@" --out "$d/readonly.out" >/dev/null 2>"$d/err"; rc=$?
[ $rc -eq 2 ] || fail "read-only: exit $rc, expected 2"
grep -q -- "--out '$d/readonly.out': is not writable (mode 0444)" "$d/err" || fail "read-only: message $(cat "$d/err")"
grep -qx old "$d/readonly.out" || fail "read-only: the file was changed"
[ "$(stat -c %a "$d/readonly.out")" = 444 ] || fail "read-only: its mode was changed"

"$exe" "$@" --out '' >"$d/result" 2>"$d/err"; rc=$?
[ $rc -eq 2 ] || fail "empty: exit $rc, expected 2"
grep -q -- "--out: must name a file" "$d/err" || fail "empty: message $(cat "$d/err")"
[ ! -s "$d/result" ] || fail "empty: the result went to standard output"
exit 0
