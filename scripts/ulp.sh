#!/bin/bash
# ulp.sh [--brief] [KDIR | --debug]
#
# The kernel's RDMA consumers (ULPs) over softhca, on one device talking
# to itself: boots a kernel and runs scripts/tests/ulp-guest.sh in it.
# The kernel is Debian's that `make` builds for (6.1) by default, the one
# of the headers in KDIR, or with --debug the debug kernel, where the
# ULPs run under lockdep, KASAN and kmemleak.
# Every ULP: NVMe-oF, NFS over RDMA, iSER, SRP, RDS, SMB Direct; then the
# carrier lost mid-I/O and the device removed under connected ULPs; with
# --brief, NVMe-oF and NFS over RDMA, the others reported as skipped;
# ULPS="nvme nfs iser srp rds smb flap removal" (the default) chooses.
# Results are named ulp/... for the default kernel, ulp-debug/... for the
# debug kernel and ulp-<major.minor>/... for any other.
set -uo pipefail
. "$(dirname "$0")/lib.sh"

# ULPS names some of them (make ulp ULPS="iser srp").
all="nvme nfs iser srp rds smb flap removal"
read -ra ulps <<<"${ULPS:-$all}"
brief=0
debug=0
case ${1:-} in
--brief) brief=1 && shift ;;
esac
case ${1:-} in
--debug) debug=1 && shift ;;
esac

if [ $debug = 1 ]; then
	suite_debug_kernel ulp
else
	suite_kernel ulp "${1:-}"
fi
if [ $brief = 1 ]; then
	ulps=(nvme nfs)
	for u in $all; do
		[[ " ${ulps[*]} " == *" $u "* ]] ||
			skip "$prefix/$u" "in make check-full and make ulp"
	done
fi

# SMB Direct.  On the 6.1 line (Debian's kernel, and the debug kernel
# built from its source) ksmbd serves no share to Debian 12's ksmbd-tools,
# over TCP either (docs/testing.md).  Debian's other kernels have SMB
# without SMB Direct: the suite builds their SMB client and server again
# with it (scripts/kernel/smbdirect.sh).
if [[ " ${ulps[*]} " == *" smb "* ]]; then
	if [[ $rel == 6.1.* ]]; then
		skip "$prefix/smb" "ksmbd of Debian's 6.1.192 discards every share reply of Debian 12's ksmbd-tools 3.4.7 (payload_sz), then oopses in smb2_open (docs/testing.md)"
		read -ra ulps <<<"${ulps[*]/smb/}"
	elif ! grep -qx 'CONFIG_CIFS_SMB_DIRECT=y' "$kdir/.config"; then
		"$top/scripts/setup.sh" smbdirect >&2 || die "setup failed"
		smbd=$("$top/scripts/kernel/smbdirect.sh" "$kdir") ||
			die "no SMB Direct modules for $rel"
		modtree_extra=("$smbd/cifs.ko" "$smbd/ksmbd.ko")
	fi
fi

softhca_guest ulp 1500 "$top/scripts/tests/ulp-guest.sh" "${ulps[@]}"
# fio's summary lines, as the guest wrote them.
[ ! -f "$share/fio.log" ] ||
	grep -E '^ *(READ|WRITE|read|write):|err=' "$share/fio.log" |
	sed 's/^ */fio: /'
guest_verdict ulp "$rc" "$share"
