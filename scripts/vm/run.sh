#!/bin/bash
# run.sh [--timeout SECS] [--log FILE] [--share DIR] [--mem SIZE] [--smp N]
#        [--append KERNEL_ARGS] [--wire MY_PORT:PEER_PORT:MAC] [--systemd]
#        KERNEL_DIR -- CMD [ARGS...]
#
# Boots the kernel in KERNEL_DIR under QEMU (TCG) with the host's root as the
# guest's root (read-only 9p + a tmpfs overlay, so the guest can write but
# nothing reaches the host) and runs CMD in it, then has kmemleak scan and
# powers off.  The console goes to stdout and to the log.
#
# KERNEL_DIR holds bzImage, release and root/lib/modules/<release>: the
# output of scripts/kernel/debian-kernel.sh (which also holds an initrd with
# the modules a 9p root needs) or of scripts/kernel/debug-kernel.sh (9p,
# virtio and overlay built in; run.sh gives it a module-less initrd).
#
# In the guest: CMD runs as root in the caller's cwd with an environment of
# only PATH, HOME=/root and every SOFTHCA_* variable, stdin /dev/null.  The
# cwd, KERNEL_DIR and the repository must be visible there: not under
# /run, /proc, /sys or /dev (fresh filesystems in the guest) unless inside
# the share.  /lib/modules/<release> is KERNEL_DIR's module tree; debugfs is
# at /sys/kernel/debug; /run is an empty tmpfs.  The share (--share
# DIR, default a fresh run_dir under $cache/runs) is mounted read-write at
# the same absolute path as on the host, so that e.g.
# SOFTHCA_RESULTS=<share>/results names the same file on both sides.  Each
# run keeps its job, CMD's status, the console log (unless --log FILE) and
# the guest's dmesg in <share>/.vm.XXXXXX/.
#
# Defaults: --timeout 600, --mem 2G, --smp 2; --append adds kernel
# arguments.  Splats are looked for in kernel messages only (splat-scan.sh
# --kernel: the guest boots with printk.time=1), so CMD's own output may
# say "WARNING:" freely.
#
# The guest has no network (-nic none) unless --wire gives it one
# virtio-net NIC with address MAC, whose backend is a QEMU UDP socket bound
# to 127.0.0.1:MY_PORT and sending to 127.0.0.1:PEER_PORT.  Two guests
# given mirrored ports share an Ethernet wire that never leaves the host's
# loopback, and either may boot first (UDP needs no listener; frames sent
# before the peer is up are lost, as on a cable).  The guest's kernel must
# have virtio_net: Debian's has it as a module, for CMD to modprobe.
#
# --systemd: systemd boots the guest, as PID 1, to sysinit.target, then
# runs CMD as a unit; CMD runs once before too, to install and enable
# units (scripts/vm/guest.sh).  systemd's console shows errors only.
#
# Exit status:
#   CMD's exit status  the guest reported it and the log has no splat
#   90  the console log has a kernel splat (scripts/vm/splat-scan.sh),
#       whatever CMD returned; the splat is printed on stderr
#   91  timeout: QEMU was killed after SECS (default 600)
#   92  the guest never reported CMD's status (panic, crash, harness error)
#   93  bad arguments or setup error on the host; nothing was run
# A CMD that itself exits with 90-93 is indistinguishable from these.
set -euo pipefail
# shellcheck source=SCRIPTDIR/../lib.sh
. "$(dirname "$0")/../lib.sh"
die() {
	say "run.sh: error: $*"
	exit 93
}

timeout=600
log=
share=
mem=2G
smp=2
append=
wire=()
systemd=

usage() {
	die "usage: run.sh [--timeout SECS] [--log FILE] [--share DIR]" \
		"[--mem SIZE] [--smp N] [--append KERNEL_ARGS]" \
		"[--wire MY_PORT:PEER_PORT:MAC] [--systemd] KERNEL_DIR -- CMD [ARGS...]"
}

# --wire MY_PORT:PEER_PORT:MAC: QEMU's arguments for the NIC, in $wire.
wire_nic() {
	local port='[1-9][0-9]*' mac='[0-9a-f][0-9a-f]' my peer addr
	grep -qx "$port:$port:$mac\(:$mac\)\{5\}" <<<"$1" ||
		die "bad --wire $1: want MY_PORT:PEER_PORT:MAC (lower-case hex)"
	my=${1%%:*}
	peer=${1#*:} && peer=${peer%%:*}
	addr=${1#*:*:}
	wire=(-netdev "socket,id=wire,udp=127.0.0.1:$peer,localaddr=127.0.0.1:$my"
		-device "virtio-net-pci,netdev=wire,mac=$addr")
}

# Paths go on the kernel command line and into QEMU's comma-separated
# options, so they must be plain.
plain_path() {
	case "$1" in *[[:space:],]*) die "unsupported path (space or comma): $1" ;; esac
}

# Is the host directory $1 the same in the guest?  The guest mounts fresh
# filesystems over these, except for what lies inside the share.
visible_in_guest() {
	if [ -n "$share" ]; then
		case "$1/" in "$share"/*) return 0 ;; esac
	fi
	case "$1/" in /run/* | /proc/* | /sys/* | /dev/*) return 1 ;; esac
}

# The initrd for the kernel in $kdir: its own (a Debian kernel's, with
# modules), or a module-less one built once into the cache.
initrd_for() {
	local key
	key=$("$top/scripts/vm/mkinitrd.sh" --key)
	if [ -f "$kdir/initrd" ]; then
		[ "$(cat "$kdir/initrd.key" 2>/dev/null)" = "$key" ] ||
			say "run.sh: warning: $kdir/initrd is older than scripts/vm/init;" \
				"rerun scripts/kernel/debian-kernel.sh"
		echo "$kdir/initrd"
		return
	fi
	with_lock "initrd-$key" build_initrd "$cache/initrd-$key.cpio"
	echo "$cache/initrd-$key.cpio"
}

build_initrd() {
	[ -f "$1" ] || "$top/scripts/vm/mkinitrd.sh" "$1" >&2
}

# The job file, sourced by scripts/vm/guest.sh: bash, with every value
# quoted by printf %q.
write_job() {
	local name envs
	envs=$(printf '%q ' "PATH=$PATH" "HOME=/root")
	for name in $(compgen -e); do
		case $name in SOFTHCA_*) envs+=$(printf '%q ' "$name=${!name}") ;; esac
	done
	{
		printf 'modules=%q\n' "$modules"
		printf 'cwd=%q\n' "$PWD"
		printf 'env=(%s)\n' "$envs"
		printf 'cmd=(%s)\n' "$(printf '%q ' "$@")"
	} >"$run/job"
}

# Runs QEMU; the console goes to stdout and $log, CR-less.  Returns
# timeout's status (124 or 137 when it had to kill QEMU).
# q35, not the default i440fx: the i440fx ACPI tables compute PCI interrupt
# routing (_PRT) in an AML loop that the debug kernel (KASAN, lockdep) under
# TCG does not finish within ACPI's 30 s loop limit, leaving virtio without
# an interrupt and the boot hung; q35's routing table is static.
#
# tsc=reliable: the TSC is the guest's clocksource from boot to end.
# Under TCG on a busy host, the clocksource watchdog finds the TSC skewed
# against the HPET by tens of milliseconds (a vCPU was descheduled) and
# marks it unstable; the kernel then patches its sched_clock static
# branches with int3 breakpoints while the other vCPU runs, which TCG
# gets wrong: Debian's 6.12 died of an int3 Oops in
# sched_clock_idle_wakeup_event() at that moment (and of a double fault
# in __kmalloc, its EFLAGS impossible, in another run that had switched
# clocksource earlier).
#
# maxcpus=1: the boot patches static branches too, and TCG can run a
# stale int3 of such a patch on the other vCPU: with the TSC reliable, the
# late initcall that marks sched_clock stable patches sched_clock_cpu(),
# and a timer interrupt on the second vCPU died there of an int3 "Fatal
# exception in interrupt" (Debian's 6.12, in CI).  So the kernel boots on
# one vCPU, and guest.sh brings the others online before the job runs.
boot() {
	local initrd=$1 cmdline
	cmdline="console=ttyS0 loglevel=5 printk.time=1 panic=-1 kunit.enable=1"
	cmdline+=" tsc=reliable maxcpus=1"
	cmdline+=" harness.init=$top/scripts/vm/guest.sh"
	cmdline+=" harness.share=$share harness.run=$run $append"
	[ -z "$systemd" ] ||
		cmdline+=" harness.systemd=1 systemd.show_status=error systemd.log_color=0"
	# --foreground keeps QEMU in our process group, so that whoever kills
	# this script's group (a CI runner, a shell job) kills QEMU too.
	timeout --foreground -k 10 "$timeout" qemu-system-x86_64 \
		-machine q35 -accel tcg -cpu max -m "$mem" -smp "$smp" \
		-nographic -no-reboot -nic none "${wire[@]}" \
		-kernel "$kdir/bzImage" -initrd "$initrd" -append "$cmdline" \
		-virtfs local,path=/,mount_tag=host,security_model=none,readonly=on,multidevs=remap \
		-virtfs "local,path=$share,mount_tag=share,security_model=none,multidevs=remap" \
		</dev/null 2>&1 | sed -u 's/\r$//' | tee "$log"
	return "${PIPESTATUS[0]}"
}

main() {
	while [ $# -gt 0 ]; do
		case $1 in
		--timeout) timeout=${2:?} && shift 2 ;;
		--log) log=${2:?} && shift 2 ;;
		--share) share=${2:?} && shift 2 ;;
		--mem) mem=${2:?} && shift 2 ;;
		--smp) smp=${2:?} && shift 2 ;;
		--append) append=${2:?} && shift 2 ;;
		--wire) wire_nic "${2:?}" && shift 2 ;;
		--systemd) systemd=1 && shift ;;
		--) usage ;;
		-*) usage ;;
		*) break ;;
		esac
	done
	if [ $# -lt 3 ] || [ "$2" != -- ]; then usage; fi
	kdir=$(cd "$1" && pwd) || die "no kernel directory $1"
	shift 2

	local release initrd rc start status splat=0 f
	for f in bzImage release; do
		[ -f "$kdir/$f" ] || die "$kdir/$f missing: not a kernel directory"
	done
	release=$(cat "$kdir/release")
	modules=$kdir/root/lib/modules/$release
	[ -d "$modules" ] || die "$modules missing"
	command -v qemu-system-x86_64 >/dev/null || die "qemu-system-x86 not installed"

	if [ -n "$share" ]; then
		share=$(cd "$share" && pwd) || die "no share directory $share"
	fi
	for f in "$kdir" "$top" "$PWD"; do
		visible_in_guest "$f" || die "$f is not visible in the guest"
	done
	[ -n "$share" ] || share=$(run_dir vm)
	for f in "$kdir" "$share" "$top"; do plain_path "$f"; done
	run=$(mktemp -d "$share/.vm.XXXXXX")
	log=${log:-$run/console.log}
	initrd=$(initrd_for) || die "cannot build the initrd"
	write_job "$@"

	start=$SECONDS
	rc=0
	boot "$initrd" || rc=$?
	say "run.sh: $release: guest ran $((SECONDS - start)) s; console log: $log"

	"$top/scripts/vm/splat-scan.sh" --kernel "$log" || splat=1
	status=$(cat "$run/status" 2>/dev/null || true)
	if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
		say "run.sh: timeout: killed QEMU after $timeout s"
		return 91
	elif [ $splat = 1 ]; then
		say "run.sh: kernel splat (CMD status ${status:-unknown})"
		return 90
	elif [ -z "$status" ]; then
		say "run.sh: the guest did not report a status (QEMU exit status $rc)"
		return 92
	fi
	return "$status"
}

main "$@"
