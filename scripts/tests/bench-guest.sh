#!/bin/bash
# Guest side of scripts/bench.sh: the same figures for softhca, rdma_rxe
# and (on the debug kernel, the only one here that has it) siw, one device
# at a time on the same veth (rxe binds UDP 4791 when its module loads),
# each device talking to itself; then the limit a loopback WRITE has,
# kernel memcpy.  Every repetition of every figure is one line of
# $SOFTHCA_SHARE/bench.raw: "DEV FIGURE VALUE"; the host takes the medians.
#
# $1: this kernel's build directory; $2: the provider library; $3:
# repetitions; $4: "smoke" for a quick pass with few iterations over the
# figures the performance gate names (bench_gated), "ulp" for the ULP
# figures alone (ulp_figures), or "" for all;
# $5: the devices' types, "softhca rxe" or "softhca rxe siw", or with
# "base" (bench.sh --baseline) softhca as an older commit built it: $6 its
# build directory, $7 its provider, its device base0.  With siw (the debug kernel), the scaling
# figures are left out: they are the Debian kernel's, where KASAN and
# kmemleak do not weigh on every object.  A full run without siw also
# keeps every sample of one 2-byte ib_send_lat per device, for the plot
# of the latency distribution (scripts/bench-plot.sh): lines "DEV VALUE"
# (us) of $SOFTHCA_SHARE/latency.raw.
set -uo pipefail
. "$(dirname "$0")/../lib.sh"

build=$1
export RDMAV_DRIVERS=$2
# client_server and listening, as the provider's tests run perftest.
. "$(dirname "$0")/provider.sh"
# shellcheck source=SCRIPTDIR/ulp-lib.sh
. "$(dirname "$0")/ulp-lib.sh"
reps=$3
mode=${4:-}
smoke=
[ "$mode" != smoke ] || smoke=smoke
types=${5:-softhca rxe}
base_build=${6:-}
base_provider=${7:-}
raw=$SOFTHCA_SHARE/bench.raw
lat_raw=$SOFTHCA_SHARE/latency.raw
ibloop_ctl=/sys/kernel/debug/ibloop/run
: >"$raw"
: >"$lat_raw"

# iters N: N over $div, at least 10: a tenth for a smoke run, and a tenth
# again on the debug kernel, where rdma_rxe moves 64 KiB messages at well
# under 1 MB/s.
div=1
[ "$smoke" != smoke ] || div=$((div * 10))
[[ $types != *siw* ]] || div=$((div * 10))
iters() {
	echo $(($1 / div > 10 ? $1 / div : 10))
}

# record DEV FIGURE VALUE: one repetition's value, when it is a number.
record() {
	[[ $3 =~ ^[0-9]+(\.[0-9]+)?$ ]] && echo "$1 $2 $3" >>"$raw"
}

# perf DEV FIGURE COLUMN TOOL ARG...: one perftest run between the
# device and itself; records the client's COLUMN of the figures' line
# (bw: 4 = BW average, 5 = MsgRate; lat: 5 = typical, 8 = 99th percentile;
# COLUMN may be two, "5,8", for FIGURE_typ and FIGURE_p99).
perf() {
	local dev=$1 figure=$2 cols=$3 tool=$4 log line connect=(-x 1)
	shift 4
	log=$(mktemp)
	# An iWARP QP is connected by a TCP handshake (MPA), so siw's QPs can
	# only be set up through rdma_cm; the others exchange their GIDs over
	# perftest's socket and use the IPv4 one.
	[ "$dev" != siw0 ] || connect=(-R)
	# A failed clock calibration (see provider.sh's perftest) shows as
	# "Can't produce a report", or as inf and nan figures: run again.
	for _ in 1 2 3; do
		client_server 18516 "$log" "$tool" -d "$dev" "${connect[@]}" \
			-p 18516 "$@" >/dev/null
		line=$(awk 'h && NF { print; exit } /#bytes/ { h = 1 }' \
			"$log.client")
		! grep -q "Can't produce a report" "$log.server" "$log.client" &&
			! grep -qw 'inf\|-\?nan' <<<"$line" && break
		line=
	done
	echo "$dev $figure: $line"
	# No figures: what the two sides said instead.
	[ -n "$line" ] || tail -n 5 "$log.server" "$log.client"
	case $cols in
	5,8)
		record "$dev" "${figure}_typ" "$(awk '{ print $5 }' <<<"$line")"
		record "$dev" "${figure}_p99" "$(awk '{ print $8 }' <<<"$line")"
		;;
	*)
		record "$dev" "$figure" "$(awk -v c="$cols" '{ print $c }' <<<"$line")"
		;;
	esac
	rm -f "$log" "$log.server" "$log.client"
}

# latency_samples DEV: each of the (sorted) half round trips of one
# ib_send_lat of 2 bytes, which -H prints as "N, VALUE" lines ahead of its
# figures; tried again, as perf does, when the clock calibration failed.
latency_samples() {
	local log samples
	log=$(mktemp)
	for _ in 1 2 3; do
		client_server 18516 "$log" ib_send_lat -d "$1" -x 1 -p 18516 \
			-s 2 -n 1000 -H >/dev/null
		samples=$(awk -v d="$1" '$1 ~ /^[0-9]+,$/ &&
			$2 ~ /^[0-9.]+(e[-+]?[0-9]+)?$/ { print d, $2 }' \
			"$log.client")
		! grep -q "Can't produce a report" "$log.server" "$log.client" &&
			[ -n "$samples" ] && break
		samples=
	done
	echo "$1 latency: $(grep -c . <<<"$samples") samples"
	[ -z "$samples" ] || echo "$samples" >>"$lat_raw"
	rm -f "$log" "$log.server" "$log.client"
}

ibloop() {
	echo "$1" >"$ibloop_ctl" && cat "$ibloop_ctl"
}

# ibloop's operation rate, kernel_ops_64: on DEV, 64-byte WRITEs, 16 in
# flight, busy-polled.
kernel_ops() {
	ibloop "dev=$1 op=write size=64 depth=16 mode=poll iters=$(iters 20000)"
}

# The in-kernel client, busy-polling: 64-byte WRITEs with 16 in flight
# (operations per second), and one at a time (the round trip, in us).
kernel_figures() {
	local dev=$1 line
	line=$(kernel_ops "$dev")
	echo "$dev kernel: $line"
	record "$dev" kernel_ops_64 "$(ibloop_field "$line" msgs_per_s)"
	line=$(ibloop "dev=$dev op=write size=64 depth=1 mode=poll iters=$(iters 5000)")
	echo "$dev kernel: $line"
	record "$dev" kernel_rtt_64 "$(awk -v ns="$(ibloop_field "$line" ns)" \
		-v n="$(ibloop_field "$line" completed)" \
		'BEGIN { if (n) printf "%.2f", ns / n / 1000 }')"
}

# What the trace events cost while off: ibloop's operation rate with
# softhca built with them (softhca-trace) and without (NOTRACE=1,
# softhca-notrace), the two loaded in turn, when that build is there.
trace_figures() {
	local ko variant line
	for variant in notrace trace; do
		line=
		ko=$build/drivers/softhca/softhca.ko
		[ $variant = trace ] || ko=$build-notrace/drivers/softhca/softhca.ko
		[ -f "$ko" ] || return 0
		insmod "$ko" && rdma link add softhca0 type softhca netdev shv0 &&
			wait_for 20 ready softhca0 &&
			line=$(kernel_ops softhca0)
		echo "softhca-$variant kernel: $line"
		record "softhca-$variant" kernel_ops_64 \
			"$(ibloop_field "$line" msgs_per_s)"
		unload softhca
	done
}

# Scaling: N RC QPs 256 deep (userspace/tests/qp-scale): the time to
# create and connect one, the kernel memory one takes, and the cost of an
# 8-byte WRITE spread over all N.
scale_figures() {
	local dev=$1 n line
	for n in 1 100 1000 10000; do
		line=$(timeout 600 "$(dirname "$RDMAV_DRIVERS")/tests/qp-scale" \
			"$dev" 1 $n "$(iters 20000)")
		echo "$dev scale: $line"
		record "$dev" "scale_create_us_$n" "$(ibloop_field "$line" create_us)"
		record "$dev" "scale_kib_$n" "$(ibloop_field "$line" kib)"
		record "$dev" "scale_op_ns_$n" "$(ibloop_field "$line" op_ns)"
	done
}

# ulp_fio DEV FIGURE FIELD FILE ARG...: one fio run of 10 s (after 2 s
# of warm-up) on FILE, O_DIRECT, so that every byte crosses DEV; records
# FIELD of its result: read_iops, read_mibs or write_mibs.
ulp_fio() {
	local dev=$1 figure=$2 field=$3 file=$4 line value
	shift 4
	line=$(fio --name=bench --filename="$file" --direct=1 \
		--ioengine=libaio --time_based --runtime=10 --ramp_time=2 \
		--output-format=terse --terse-version=3 "$@" 2>&1 | tail -n 1)
	# fio's terse fields: 7 the read KiB/s, 8 the read IOPS, 48 the
	# write KiB/s.
	value=$(awk -F';' -v f="$field" 'NF > 48 {
		if (f == "read_iops") print $8
		else printf "%.1f", (f == "read_mibs" ? $7 : $48) / 1024 }' \
		<<<"$line")
	echo "$dev $figure: ${value:-$line}"
	record "$dev" "$figure" "$value"
}

# ulp_figures DEV: the kernel's ULPs on DEV (ulp-lib.sh's NVMe-oF target
# and NFS server, their hosts in the same guest): a RAM disk behind
# nvmet-rdma read 4 KiB at a time at random, queue depth 32 (IOPS), and
# written and read 128 KiB at a time in sequence (MiB/s); a file of an
# NFS mount over RDMA written and read 1 MiB at a time (MiB/s).  The
# target's port is DEV's only while DEV is loaded.
ulp_figures() {
	local dev=$1 disk
	nvme_subsystem && nvme_port_add && nvme_host -i 2 >/dev/null &&
		disk=$(nvme_disk) || echo "$dev: no NVMe-oF namespace"
	if [ -n "$disk" ]; then
		ulp_fio "$dev" nvme_write_128k write_mibs "$disk" --rw=write \
			--bs=128k --iodepth=32
		ulp_fio "$dev" nvme_read_128k read_mibs "$disk" --rw=read \
			--bs=128k --iodepth=32
		ulp_fio "$dev" nvme_randread_4k read_iops "$disk" \
			--rw=randread --bs=4k --iodepth=32
		nvme disconnect -n "$nqn" >/dev/null
	fi
	[ ! -e "$nvmet/ports/1" ] || nvme_port_remove
	if ! { { mountpoint -q "$export" || nfs_server; } && nfs_mount; }; then
		echo "$dev: no NFS mount over RDMA"
		return
	fi
	ulp_fio "$dev" nfs_write_1m write_mibs "$mnt/file" --rw=write \
		--bs=1M --iodepth=8 --size=128M
	ulp_fio "$dev" nfs_read_1m read_mibs "$mnt/file" --rw=read \
		--bs=1M --iodepth=8 --size=128M
	umount "$mnt"
}

# specs: the perftest figures, one a line: FIGURE COLUMN TOOL ARG...
specs() {
	local s q n
	for s in 64 4096 65536 1048576; do
		case $s in
		64 | 4096) n=$(iters 5000) ;;
		65536) n=$(iters 1000) ;;
		*) n=$(iters 100) ;;
		esac
		for q in 1 4; do
			echo "write_bw_${s}_q$q 4 ib_write_bw -s $s -q $q -n $n"
			echo "read_bw_${s}_q$q 4 ib_read_bw -s $s -q $q -n $n"
		done
	done
	for s in 2 4096; do
		echo "send_lat_$s 5,8 ib_send_lat -s $s -n $(iters 1000)"
		echo "write_lat_$s 5,8 ib_write_lat -s $s -n $(iters 1000)"
	done
	echo "write_rate_8_q4 5 ib_write_bw -s 8 -q 4 -n $(iters 5000)"
	echo "send_rate_8_q4 5 ib_send_bw -s 8 -q 4 -n $(iters 5000)"
	# perftest posts through ibv_wr_* where the device has it (rdma_rxe,
	# softhca); through ibv_post_send with this option.
	echo "write_rate_8_q4_post_send 5 ib_write_bw -s 8 -q 4" \
		"-n $(iters 5000) --use_old_post_send"
	echo "send_lat_2_post_send 5,8 ib_send_lat -s 2 -n $(iters 1000)" \
		--use_old_post_send
}

figures() {
	local dev=$1 spec lines line
	if [ "$mode" = ulp ]; then
		ulp_figures "$dev"
		return
	fi
	# (No /dev/fd in the guest for a process substitution.)
	mapfile -t lines <<<"$(specs)"
	for line in "${lines[@]}"; do
		read -r -a spec <<<"$line"
		[ -z "$smoke" ] || bench_gated "${spec[0]}" || continue
		perf "$dev" "${spec[@]}"
	done
	# ibloop and qp-scale connect their QPs by modify_qp alone, which an
	# iWARP QP cannot be.
	[ "$dev" = siw0 ] || kernel_figures "$dev"
	[ -n "$smoke" ] || [[ $types == *siw* ]] || scale_figures "$dev"
	[ -n "$smoke" ] || [[ $types == *siw* ]] || ulp_figures "$dev"
	# One run's samples are enough for the shape, and cheap.
	[ -n "$smoke" ] || [ "$rep" != 1 ] || [[ $types == *siw* ]] ||
		latency_samples "$dev"
}

# ready DEV: DEV's port is up, and a RoCE device has its IPv4 GID (siw's
# one GID is the netdev's MAC address).
ready() {
	grep -q ACTIVE "/sys/class/infiniband/$1/ports/1/state" 2>/dev/null &&
		{ [ "$1" = siw0 ] || grep -qx \
			"0000:0000:0000:0000:0000:ffff:c000:0201" \
			"/sys/class/infiniband/$1/ports/1/gids/1" 2>/dev/null; }
}

# load TYPE / unload TYPE: the device TYPE0 on the veth, and its module.
load() {
	local link=$1
	case $1 in
	softhca) insmod "$build/drivers/softhca/softhca.ko" ;;
	base) insmod "$base_build/drivers/softhca/softhca.ko" && link=softhca ;;
	rxe) rxe_modprobe ;;
	*) modprobe "$1" ;;
	esac && rdma link add "${1}0" type "$link" netdev shv0 &&
		wait_for 20 ready "${1}0"
}

unload() {
	rdma link delete "${1}0"
	case $1 in
	rxe) rmmod rdma_rxe ;;
	base) rmmod softhca ;;
	*) rmmod "$1" ;;
	esac
}

ip link add shv0 type veth peer name shv1 &&
	ip link set shv0 up && ip link set shv1 up &&
	ip addr add 192.0.2.1/24 dev shv0 && ip link set lo up ||
	echo "bench: no veth"
# rdma_cm's listener (siw's perftest -R) must see the device's address.
server_addr=192.0.2.1
modprobe -a ib_uverbs udp_tunnel ip6_udp_tunnel
modprobe rdma_ucm
insmod "$build/drivers/ibloop/ibloop.ko" || echo "bench: no ibloop"

for rep in $(seq "$reps"); do
	echo "bench: repetition $rep of $reps"
	for type in $types; do
		if [ "$type" = base ]; then
			# The baseline's own provider and test programs.
			load base && RDMAV_DRIVERS=$base_provider figures base0
		else
			load "$type" && figures "${type}0"
		fi
		unload "$type"
	done
	[ "$mode" != ulp ] || continue
	[ -n "$smoke" ] || [[ $types == *siw* ]] || trace_figures
	for s in 64 4096 65536 1048576; do
		line=$(ibloop "op=memcpy size=$s depth=16 iters=$(iters $((s < 65536 ? 200000 : 2000)))")
		echo "memcpy: $line"
		record memcpy "memcpy_$s" "$(awk -v m="$(ibloop_field "$line" mbps)" \
			'BEGIN { printf "%.2f", m * 1000000 / 1048576 }')"
	done
done
rmmod ibloop
