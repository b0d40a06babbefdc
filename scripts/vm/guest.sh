#!/bin/bash
# Stage 2 of a harness guest: PID 1 after scripts/vm/init switched to the
# overlay over the host's root, running the host's bash.  Mounts the rest,
# runs the job run.sh wrote into the share, records its exit status there,
# has kmemleak scan, and powers off.
#
# No `set -e`: whatever fails, this must reach the poweroff, because if PID 1
# exits the kernel panics (which run.sh would report as a crash).
set -u

note() { echo "softhca-guest: $*"; }

# The reboot system call powers off in this process's own context, so PID 1
# never runs again once devices shut down.  A sysrq power-off ran in a
# worker while PID 1 went on: a page fault on the 9p root after virtio-9p's
# shutdown killed it with SIGBUS, and the kernel panicked.  The sysrq is a
# fallback only, should the exec fail (execfail: a failed exec returns).
poweroff() {
	sync
	shopt -s execfail
	# shellcheck disable=SC2093 # it does continue, if the exec fails
	exec /bin/busybox poweroff -f
	echo o >/proc/sysrq-trigger
	sleep 600
}

# param NAME: the value of harness.NAME= on the kernel command line.
param() {
	local word
	for word in $(</proc/cmdline); do
		case $word in "harness.$1="*) echo "${word#*=}" && return ;; esac
	done
}

# The vCPUs the kernel did not boot on (run.sh boots with maxcpus=1).
online_cpus() {
	local f
	for f in /sys/devices/system/cpu/cpu[0-9]*/online; do
		[ -e "$f" ] || continue
		[ "$(<"$f")" = 1 ] || echo 1 >"$f" || note "cannot online ${f%/online}"
	done
}

mount_basics() {
	mkdir -p /dev/pts /dev/shm
	mount -t devpts -o gid=5,mode=620,ptmxmode=666 devpts /dev/pts
	mount -t tmpfs shm /dev/shm
	mount -t debugfs debugfs /sys/kernel/debug
	# What udev would link, for bash's <(...) (DKMS uses it).
	ln -sfn /proc/self/fd /dev/fd
	# /tmp stays the overlay's: writable here, never written on the host,
	# and a checkout under the host's /tmp (a CI clone) stays visible.
	# The host's /run (pid files, sockets) means nothing in here.
	mount -t tmpfs -o mode=755 run /run
	ip link set lo up 2>/dev/null
}

# The share, read-write, at the path it has on the host.
mount_share() {
	mkdir -p "$1" &&
		mount -t 9p -o trans=virtio,version=9p2000.L,msize=262144 share "$1"
}

# The kernel's modules where modprobe looks; the host has none of its own.
mount_modules() {
	local release
	release=$(uname -r)
	mkdir -p "/lib/modules/$release" &&
		mount --bind "$1" "/lib/modules/$release"
}

# Run the job's command with only the job's environment (see run.sh).
run_job() {
	# shellcheck disable=SC2154 # env and cmd are set by the job file
	env -i "${env[@]}" "${cmd[@]}" </dev/null
}

# kmemleak only reports an object that was already older than 5 s when a
# scan started and that was unreferenced, with unchanged contents, in two
# consecutive scans.  So: scan once, wait until the job ended over 5 s ago,
# scan again, and print the report to the console for run.sh to see.
kmemleak() {
	local f=/sys/kernel/debug/kmemleak ended=$1 now
	[ -e $f ] || return 0
	echo scan >$f || note "kmemleak scan failed"
	while now=$(cut -d. -f1 /proc/uptime) && [ $((now - ended)) -le 6 ]; do
		sleep 1
	done
	echo scan >$f || note "kmemleak scan failed"
	cat $f
}

# Runs the job, records its status, has kmemleak scan, powers off.
job() {
	local run=$1 status ended
	run_job
	status=$?
	ended=$(cut -d. -f1 /proc/uptime)
	# run.sh reads this; no file means the guest died before getting here.
	echo "$status" >"$run/status"
	note "command exited with status $status"
	kmemleak "$ended"
	dmesg >"$run/dmesg" 2>&1
	poweroff
}

# run.sh --systemd: the job's command runs twice, told which time by
# SOFTHCA_SYSTEMD_PHASE: "preboot" here, to install and enable units,
# then systemd takes over as PID 1 and boots to softhca-harness.target:
# sysinit.target (udev, and the units enabled on devices), then
# softhca-harness.service, which runs it again as "booted", as a job.
#
# /tmp is the host's (seen through the overlay, as mount_basics says), and
# Debian's tmpfiles.d/tmp.conf has systemd-tmpfiles empty it at boot: a
# checkout under /tmp, a CI clone, vanished from under the job.  An empty
# tmp.conf in /etc masks it.  Should the job's unit fail, systemd powers
# off rather than wait for run.sh's timeout.
systemd_boot() {
	local units=/run/systemd/system
	env+=(SOFTHCA_SYSTEMD_PHASE=preboot)
	run_job || note "the job's preboot phase failed: $?"
	mkdir -p /etc/tmpfiles.d && : >/etc/tmpfiles.d/tmp.conf
	mkdir -p $units
	cat >$units/softhca-harness.target <<-EOF
		[Unit]
		Description=softhca harness: the job, once the system is up
		Requires=softhca-harness.service
		After=softhca-harness.service
		AllowIsolate=yes
	EOF
	cat >$units/softhca-harness.service <<-EOF
		[Unit]
		Description=softhca harness job
		Requires=sysinit.target
		After=sysinit.target

		[Service]
		Type=oneshot
		ExecStart=/bin/bash $0 --job
		FailureAction=poweroff-force
		StandardOutput=journal+console
		StandardError=journal+console
	EOF
	exec /lib/systemd/systemd --unit=softhca-harness.target
}

# The job file, the modules and the job's cwd.
prepare() {
	local share=$1 run=$2
	if ! mount_share "$share" || ! [ -f "$run/job" ]; then
		note "cannot reach the job in $run"
		poweroff
	fi
	# shellcheck source=/dev/null # written by run.sh
	. "$run/job"
	# shellcheck disable=SC2154 # modules is set by the job file
	mount_modules "$modules" || note "cannot mount $modules"
	# shellcheck disable=SC2154 # cwd is set by the job file
	cd "$cwd" || { note "cannot cd to $cwd" && poweroff; }
}

main() {
	local share run
	share=$(param share)
	run=$(param run)
	if [ "${1:-}" = --job ]; then
		# softhca-harness.service: the share and modules are mounted.
		# shellcheck source=/dev/null # written by run.sh
		. "$run/job"
		cd "$cwd" || { note "cannot cd to $cwd" && poweroff; }
		env+=(SOFTHCA_SYSTEMD_PHASE=booted)
		job "$run"
	fi
	mount_basics
	online_cpus
	prepare "$share" "$run"
	[ "$(param systemd)" != 1 ] || systemd_boot
	job "$run"
}

main "$@"
