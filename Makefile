# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# softhca top-level make.  `make` builds the module for KDIR and the
# user-space provider; `make check` runs every suite; `make demo` shows the
# device in a VM.  See README.md.

# The kernel to build for: the running kernel's build tree when it has one,
# else Debian's default headers (linux-headers-amd64).
debian_headers := $(shell dpkg-query -W -f='$${Depends}' linux-headers-amd64 \
	2>/dev/null | sed -n 's/^\(linux-headers-[^ ,]*\).*/\1/p')
KDIR ?= $(firstword $(wildcard /lib/modules/$(shell uname -r)/build) \
	$(if $(debian_headers),/usr/src/$(debian_headers)))
KREL := $(shell sed -n 's/.*UTS_RELEASE "\(.*\)"/\1/p' \
	$(KDIR)/include/generated/utsrelease.h 2>/dev/null)

# Kbuild builds in the source directory (M=), and 6.1/6.12 have no MO=, so
# each kernel gets a tree of symlinks to the sources under build/<release>/;
# the modules land in build/<release>/drivers/softhca/softhca.ko (and
# build/<release>/kunit/softhca_kunit.ko for kernels with KUnit).
# NOTRACE=1: softhca without its trace events (drivers/softhca/trace.h),
# in build/<release>-notrace/, for make bench to measure what they cost.
# Always with the kernel's extra warnings (W=1), which softhca is free of:
# a build shows a new one at once, and every build has the same flags, so
# the suites use the lint's build (make lint, in make check) as it is.
BUILD := $(CURDIR)/build/$(KREL)$(if $(NOTRACE),-notrace)
SOURCES := Kbuild drivers include kunit

.PHONY: all modules userspace install uninstall deb check check-full demo \
	bench fuzz ulp lint clean print-kdir blktests

all: modules userspace

modules:
	@test -n "$(KREL)" || { echo "no kernel build tree: set KDIR" >&2; exit 1; }
	@mkdir -p $(BUILD)
	@cp -as --remove-destination $(addprefix $(CURDIR)/,$(SOURCES)) $(BUILD)/
	$(MAKE) -C $(KDIR) M=$(BUILD) W=1 modules

userspace:
	$(MAKE) -C userspace

install: modules userspace
	$(MAKE) -C $(KDIR) M=$(BUILD) modules_install
	$(MAKE) -C userspace install

uninstall:
	$(MAKE) -C userspace uninstall

# The Debian packages (debian/), built by dpkg-buildpackage from a copy of
# the tree under build/deb/, where the .debs land: softhca-dkms and
# softhca-ibverbs-provider.
DEB_VERSION = $(shell dpkg-parsechangelog -l debian/changelog -S Version)
DEB_TREE = $(CURDIR)/build/deb/softhca-$(DEB_VERSION)
deb:
	rm -rf $(CURDIR)/build/deb && mkdir -p $(DEB_TREE)
	cp -a $(addprefix $(CURDIR)/,$(SOURCES) userspace debian Makefile \
		README.md) $(DEB_TREE)/
	cd $(DEB_TREE) && dpkg-buildpackage -b -us -uc
	rm -rf $(DEB_TREE)

check:
	scripts/check.sh

# make check with every wire case on both kernels (about 15 minutes more).
check-full:
	scripts/check.sh --full

demo:
	scripts/demo.sh

# softhca beside rdma_rxe (Debian's kernel) and beside rdma_rxe and siw (the
# debug kernel); REPS repetitions, the median reported.  BASELINE=<commit>
# measures that commit's softhca too, in the same boot of Debian's kernel.
REPS ?= 3
bench:
	scripts/bench.sh --reps $(REPS) $(if $(BASELINE),--baseline $(BASELINE))

# The fuzzers on the debug kernel (docs/fuzzing.md).  The wire's: 10^6
# frames, or DURATION seconds (then as many frames as fit), or FRAMES
# frames; then the uverbs and rings one, for DURATION seconds (default 90).
# SEED replays a campaign.
fuzz:
	scripts/fuzz.sh $(if $(DURATION),--seconds $(DURATION)) \
		$(if $(FRAMES),--frames $(FRAMES)) $(if $(SEED),--seed $(SEED))
	DURATION=$(DURATION) SEED=$(SEED) scripts/fuzz-uverbs.sh

# The kernel's RDMA consumers (NVMe-oF, NFS over RDMA, iSER, SRP, RDS) over
# softhca, the carrier lost and the device removed under them, on
# Debian's 6.1 and 6.12 kernels and the debug kernel; ULPS="nvme nfs iser
# srp rds flap removal" chooses, ULPS=smb tries SMB Direct.
ulp:
	scripts/ulp.sh
	scripts/ulp.sh $(lastword $(sort $(wildcard \
		/usr/src/linux-headers-6.12.*+deb12-amd64)))
	scripts/ulp.sh --debug

# blktests' soft-RDMA groups, nvme (over rdma) and srp, on softhca beside
# rdma_rxe, from a blktests checkout: make blktests BLKTESTS=<dir>
# [TESTS="nvme/003 srp"] [KDIR=<6.12 headers>].
blktests:
	$(if $(BLKTESTS),,$(error BLKTESTS=<a blktests checkout> is needed))
	scripts/setup.sh blktests
	scripts/blktests.sh $(BLKTESTS) $(if $(filter command line,$(origin KDIR)),$(KDIR))

lint:
	scripts/lint.sh

clean:
	rm -rf build
	$(MAKE) -C userspace clean

print-kdir:
	@echo $(KDIR)
