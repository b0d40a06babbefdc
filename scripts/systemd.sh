#!/bin/bash
# systemd.sh [KDIR]
#
# The persistent link (userspace/systemd/softhca@.service) in a guest that
# systemd boots as PID 1 (scripts/vm/run.sh --systemd), on a Debian kernel
# (default: the kernel `make` builds for, Debian's 6.1) with softhca in its
# module tree, as an installed module would be, and a virtio NIC (on a
# wire to nowhere).  scripts/tests/systemd-guest.sh enables the unit on
# it before the boot and checks what the unit does after.
# Results: systemd/... (systemd-<major.minor>/... for another kernel).
set -uo pipefail
# shellcheck source=SCRIPTDIR/lib.sh
. "$(dirname "$0")/lib.sh"

suite_kernel systemd "${1:-}"

share=$(run_dir "systemd-$rel")
modtree=$(softhca_modtree "$share") || die "cannot index modules"
read -r port_a port_b <<<"$(free_ports)"
mac=52:54:00:5c:a0:01

start=$SECONDS
SOFTHCA_RESULTS=$share/results SOFTHCA_MODTREE=$modtree \
	"$top/scripts/vm/run.sh" --systemd --timeout 420 \
	--share "$share" --log "$share/console.log" \
	--wire "$port_a:$port_b:$mac" "$kernel" -- \
	"$top/scripts/tests/systemd-guest.sh" \
	"$top/userspace/systemd/softhca@.service" "$mac" >/dev/null
rc=$?
say "systemd ($rel): guest run took $((SECONDS - start)) s"
guest_verdict systemd $rc "$share"
