#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Writes the CLI reference (docs/cli.md) from the binary's own --help, so that it cannot drift from
# what the program accepts: a test (cli.cli_reference_is_current) regenerates it and fails when the
# committed file differs.
#   scripts/cli-reference.sh build/release/cli/capplan > docs/cli.md
set -euo pipefail
bin="${1:?usage: scripts/cli-reference.sh CAPPLAN_BINARY}"
commands=(estimate search serve tco catalog validate-published validate-serving calibrate validate)
cat <<'HEAD'
# CLI reference

Every `capplan` command with its options, as `capplan COMMAND --help` prints them (this page is
generated from that output by `scripts/cli-reference.sh`; a test fails when it is stale). The
task guides say when to use which: [pre-training](../README.md), [fine-tuning](finetune.md),
[planning](planner.md), [calibration](calibration.md), [accuracy](accuracy.md). Exit codes: 0
ok, 2 invalid input (the message names the field and value), 3 nothing meets what was asked
(the message says why), 1 an internal error or output that could not be written.

HEAD
echo '- [capplan](#capplan)'
for c in "${commands[@]}"; do echo "- [capplan $c](#capplan-$c)"; done
echo
echo '## capplan'
echo
echo '```text'
"$bin" --help
echo '```'
for c in "${commands[@]}"; do
  echo
  echo "## capplan $c"
  echo
  echo '```text'
  "$bin" "$c" --help
  echo '```'
done
