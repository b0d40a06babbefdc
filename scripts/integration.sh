#!/bin/bash
# integration.sh [--brief] [KDIR]
#
# Integration tests on a Debian kernel ("what a user gets"): builds softhca
# for KDIR (default: the kernel `make` builds for, Debian's 6.1), boots
# that Debian kernel and runs scripts/tests/integration-guest.sh.  Results
# are named integ/... for the default kernel and integ-<major.minor>/...
# for any other, so that make check reports each kernel apart.  --brief:
# rdma-core's python suite on softhca alone, against the tests
# scripts/tests/pyverbs-passes lists, not beside rdma_rxe as well
# (scripts/tests/provider.sh, pyverbs).
set -uo pipefail
. "$(dirname "$0")/lib.sh"

export SOFTHCA_PYVERBS_BRIEF=
[ "${1:-}" != --brief ] || { SOFTHCA_PYVERBS_BRIEF=1 && shift; }
suite_kernel integ "${1:-}"

softhca_guest integration 900 "$top/scripts/tests/integration-guest.sh" \
	"$top/build/$rel" "$top/build/userspace/libsofthca"
# The ibloop result lines (throughput, checks), as the guest wrote them.
# ibloop.ko needs no copying: the guest sees $top/build/$rel through 9p.
if [ -f "$share/ibloop.log" ]; then
	sed 's/^/ibloop: /' "$share/ibloop.log"
fi
# The provider's figures (scripts/tests/provider.sh), likewise.
for log in pingpong perftest syscalls pyverbs; do
	[ ! -f "$share/$log.log" ] || sed "s/^/$log: /" "$share/$log.log"
done
guest_verdict integ "$rc" "$share"
