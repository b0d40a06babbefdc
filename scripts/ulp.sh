#!/bin/bash
# ulp.sh [KDIR]
#
# The kernel's RDMA consumers (ULPs) over softhca, on a Debian kernel
# (default: the one `make` builds for, Debian's 6.1): boots it and runs
# scripts/tests/ulp-guest.sh, NVMe-oF and NFS over RDMA on one device
# talking to itself.  Results are named ulp/... for the default kernel and
# ulp-<major.minor>/... for any other.
set -uo pipefail
. "$(dirname "$0")/lib.sh"

suite_kernel ulp "${1:-}"
debian_guest ulp 900 "$top/scripts/tests/ulp-guest.sh"
# fio's summary lines, as the guest wrote them.
[ ! -f "$share/fio.log" ] ||
	grep -E '^ *(READ|WRITE|read|write):|err=' "$share/fio.log" |
	sed 's/^ */fio: /'
guest_verdict ulp "$rc" "$share"
