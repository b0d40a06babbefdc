#!/bin/bash
# blktests-guest.sh DEVICE BLKTESTS CONFIG TEST...
#
# Guest side of scripts/blktests.sh: blktests' TESTs (groups, nvme with
# NVMET_TRTYPES=rdma and srp, or single tests) from the built checkout
# BLKTESTS, with CONFIG the booted kernel's options file, over the
# soft-RDMA DEVICE: rxe (blktests' own choice, USE_RXE=1) or softhca
# (the same, with blktests-shim first in PATH: its rdma_rxe becomes
# softhca).  blktests binds the device to every netdev with a carrier;
# this guest has one veth pair, shv0 (192.0.2.1/24) and shv1.  Each
# test is reported as blktests/GROUP/NNN, with blktests' own reason
# when it did not run; blktests' results stay in the share.
set -uo pipefail
# shellcheck source=SCRIPTDIR/../lib.sh
. "$(dirname "$0")/../lib.sh"

device=$1
src=$2
kconfig=$3
shift 3
out=$(dirname "$SOFTHCA_RESULTS")/blktests-$device

mount --bind "$SOFTHCA_MODTREE" "/lib/modules/$(uname -r)" ||
	die "cannot mount the module tree"
mountpoint -q /sys/kernel/config ||
	{ modprobe configfs && mount -t configfs none /sys/kernel/config; } ||
	die "no configfs"
[ -e "/boot/config-$(uname -r)" ] || cp "$kconfig" /boot/ ||
	die "cannot give blktests the kernel's options"
if ! ip link add shv0 type veth peer name shv1 || ! ip link set shv0 up ||
	! ip link set shv1 up || ! ip addr add 192.0.2.1/24 dev shv0; then
	die "cannot make the veth pair"
fi

# The loop driver, loaded for good: without systemd's static device
# nodes, /dev/loop-control exists only while it is loaded, and blktests
# unloads what a test's requirements loaded, so a later test that
# assumes it (nvme/047, nvme/051) found no loop device.
modprobe loop || die "no loop driver"

# udev, which the srp group's multipath devices need (blktests waits for
# /dev/disk/by-id/dm-uuid-mpath-*), and which this guest does not run
# by itself.
if ! /lib/systemd/systemd-udevd --daemon ||
	! udevadm trigger --action=add || ! udevadm settle --timeout=60; then
	die "cannot start udev"
fi

if [ "$device" = softhca ]; then
	shim=/run/blktests-shim
	mkdir -p "$shim"
	ln -s "$top/scripts/tests/blktests-shim" "$shim/rdma"
	ln -s "$top/scripts/tests/blktests-shim" "$shim/modprobe"
	export PATH=$shim:$PATH
fi

# Where blktests works (its output and each test's TMPDIR, the NVMe-oF
# namespace's file among them): ext4 on a 768 MiB RAM disk, since nvmet's
# file backend opens its file with O_DIRECT, which 6.1's tmpfs (this
# guest's /tmp) refuses.
work=/blktests-work
if ! modprobe brd rd_nr=1 rd_size=786432 || ! mkfs.ext4 -q /dev/ram0 ||
	! mkdir -p "$work" || ! mount /dev/ram0 "$work"; then
	die "cannot make blktests' work area"
fi

# blktests' configuration, whatever the checkout's own config says: the
# NVMe-oF target's namespace a block device (a loop device on a file; not
# also the file itself, which doubles the group's time under TCG) of
# 512 MiB; tests that want a file backend have one.
config=/run/blktests.config
cat >"$config" <<CONF
NVMET_TRTYPES=rdma
NVMET_BLKDEV_TYPES=device
USE_RXE=1
NVME_IMG_SIZE=512M
CONF
mkdir -p "$out"
(cd "$src" && ./check -c "$config" -o "$work/results" "$@") \
	>"$out/check.log" 2>&1
say "blktests: ./check exited $?"
cp -a "$work/results/." "$out/"

# One result per test, from ./check's own lines: "GROUP/NNN (...)
# [passed|failed|not run]", then indented lines, the first of which (not
# a runtime) says why it did not run, or where the failure shows.  A group
# that does not run at all is one line, GROUP/***.
awk '
function flush() {
	if (name != "")
		print status, name, why
	name = ""
}
/^[a-z]+\/[0-9*]+ .*\[(passed|failed|not run)\]$/ {
	flush()
	name = $1
	sub(/\/\*\*\*$/, "", name)
	status = $NF == "run]" ? "SKIP" : $NF == "[passed]" ? "PASS" : "FAIL"
	why = ""
	next
}
/^    / && name != "" && why == "" && $1 != "runtime" {
	why = $0
	sub(/^ +/, "", why)
}
END { flush() }
' "$out/check.log" | while read -r status name why; do
	report "$status" "blktests/$name" "$why"
done
