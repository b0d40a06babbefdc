#!/bin/bash
# Install the Debian packages softhca's build, tests and demo need; a no-op
# when they are all there.  Debian 12 (bookworm), as root.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

pkgs=(
	# module and debug-kernel builds
	build-essential bc bison flex libelf-dev libssl-dev dwarves cpio kmod
	linux-headers-amd64 linux-source-6.1 sparse xz-utils python3
	# the VM harness
	qemu-system-x86 busybox-static
	# rdma-core 44 and its tools, for the provider and the integration tests
	rdma-core ibverbs-utils ibverbs-providers libibverbs-dev perftest
	rdmacm-utils python3-pyverbs iproute2
)

missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" ||
		missing+=("$p")
done
[ ${#missing[@]} = 0 ] && exit 0

[ "$(id -u)" = 0 ] || die "missing packages (${missing[*]}); run as root"
say "setup: installing ${missing[*]}"
apt-get update -qq
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
	"${missing[@]}" >/dev/null
