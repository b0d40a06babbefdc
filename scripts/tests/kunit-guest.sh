#!/bin/bash
# Guest side of scripts/kunit.sh.  $1: the build directory for this kernel.
# Loading softhca_kunit.ko runs its suites.
set -euo pipefail
build=$1

# KUnit on 6.1 runs the suites inside insmod, which sleeps uninterruptibly
# for as long as they take (minutes under TCG with KASAN and lockdep): let
# the hung-task detector tell that apart from a real hang.
echo 600 >/proc/sys/kernel/hung_task_timeout_secs

# What softhca.ko needs, which insmod does not load.
modprobe -a ib_core udp_tunnel ip6_udp_tunnel
insmod "$build/drivers/softhca/softhca.ko"
insmod "$build/kunit/softhca_kunit.ko"
# The kernel log has the whole KTAP, parameterised cases included (6.1's
# debugfs results keep only a case's last parameter).
dmesg --notime >"$SOFTHCA_SHARE/dmesg.txt"
# The same with timestamps: how long each suite took.
dmesg >"$SOFTHCA_SHARE/dmesg-time.txt"
rmmod softhca_kunit
rmmod softhca
