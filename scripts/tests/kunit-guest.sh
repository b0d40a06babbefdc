#!/bin/bash
# Guest side of scripts/kunit.sh.  $1: the build directory for this kernel.
# Loading softhca_kunit.ko runs its suites; debugfs keeps their KTAP.
set -euo pipefail
build=$1

insmod "$build/drivers/softhca/softhca.ko"
insmod "$build/kunit/softhca_kunit.ko"
for d in /sys/kernel/debug/kunit/softhca_*/; do
	cat "$d/results"
done >"$SOFTHCA_SHARE/results.ktap"
rmmod softhca_kunit
rmmod softhca
