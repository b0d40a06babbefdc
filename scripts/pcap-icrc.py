#!/usr/bin/python3
"""pcap-icrc.py CAPTURE...

Checks the ICRC of every RoCEv2 packet over IPv4 in the CAPTUREs (pcap or
pcapng) that was captured whole, against the ICRC Scapy computes
(scapy.contrib.roce, an implementation that is not softhca's).  Prints
one line, "checked N, bad B, not checked S (IPv6 or cut by the snap
length)", then each bad packet's capture and number, and exits 1 when a packet is
bad or none was checked.  Scapy 2.5 (Debian 12) computes the ICRC of
IPv4 packets only.
"""

import struct
import sys

from scapy.contrib.roce import BTH
from scapy.layers.inet import IP
from scapy.utils import PcapNgReader, PcapReader


def packets(path):
    """The packets of the capture, whichever of the two formats it is in."""
    with open(path, "rb") as f:
        magic = f.read(4)
    reader = PcapNgReader if magic == b"\x0a\x0d\x0d\x0a" else PcapReader
    with reader(path) as r:
        yield from r


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    checked = skipped = 0
    bad = []
    for path in sys.argv[1:]:
        for number, pkt in enumerate(packets(path), 1):
            if BTH not in pkt:
                continue
            whole = pkt.wirelen is None or pkt.wirelen == len(pkt)
            if IP not in pkt or not whole:
                skipped += 1
                continue
            bth = pkt[BTH]
            # Scapy's field holds the ICRC's four bytes as they are on
            # the wire, big-endian; compute_icrc() returns the bytes to
            # put there.
            if bth.compute_icrc(None) != struct.pack("!I", bth.icrc):
                bad.append(f"{path}: packet {number}")
            checked += 1
    print(f"checked {checked}, bad {len(bad)}, not checked {skipped} "
          "(IPv6 or cut by the snap length)")
    for where in bad:
        print(f"bad ICRC: {where}")
    sys.exit(1 if bad or not checked else 0)


if __name__ == "__main__":
    main()
