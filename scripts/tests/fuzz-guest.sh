#!/bin/bash
# Guest side of scripts/fuzz.sh.  $1: the build directory for this kernel;
# the rest: softhca_fuzz.ko's parameters (seed=, frames=, seconds=).
# Loading softhca_fuzz.ko runs the campaign.
set -euo pipefail
build=$1
shift

# The campaign runs inside insmod, in rounds of at most 300 s (KUnit's
# limit per case): let the hung-task detector tell that from a hang.
echo 600 >/proc/sys/kernel/hung_task_timeout_secs

modprobe -a ib_core udp_tunnel ip6_udp_tunnel
insmod "$build/drivers/softhca/softhca.ko"
insmod "$build/kunit/softhca_fuzz.ko" "$@"
dmesg --notime >"$SOFTHCA_SHARE/dmesg.txt"
rmmod softhca_fuzz
rmmod softhca
