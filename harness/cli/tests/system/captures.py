"""Frames and capture files for the `rocehil analyze` system tests.

Frames are built with scapy (Debian's, in /usr/bin/python3); files are written byte by byte with
struct so the tests control what scapy's writers do not: captured length below wire length,
nanosecond and microsecond pcap in either byte order, pcapng with if_tsresol/if_tsoffset and
several interfaces, and damaged tails.
"""

import struct
import zlib
from dataclasses import dataclass

from scapy.compat import raw
from scapy.contrib.roce import BTH, cnp
from scapy.layers.inet import IP, TCP, UDP, IPOption_Router_Alert
from scapy.layers.inet6 import IPv6
from scapy.layers.l2 import ARP, Dot1AD, Dot1Q, Ether
from scapy.packet import Raw

ROCE_PORT = 4791
SRC_MAC = "02:00:00:00:00:01"
DST_MAC = "02:00:00:00:00:02"
PFC_MAC = "01:80:c2:00:00:01"
IPV6_ICRC_PLACEHOLDER = 0x0BADC0DE  # scapy computes ICRC for IPv4 only

# RC opcodes (IBTA 9.2), UD SEND_ONLY and CNP.
SEND_FIRST, SEND_MIDDLE, SEND_LAST, SEND_ONLY = 0x00, 0x01, 0x02, 0x04
WRITE_FIRST, WRITE_MIDDLE, WRITE_LAST, WRITE_ONLY, WRITE_ONLY_IMM = 0x06, 0x07, 0x08, 0x0A, 0x0B
READ_REQUEST, READ_RESPONSE_ONLY, ACKNOWLEDGE = 0x0C, 0x10, 0x11
UD_SEND_ONLY = 0x64
CNP = 0x81


@dataclass(frozen=True)
class Record:
    """One capture record: timestamp, the captured bytes and the length the frame had on the wire."""

    ts_ns: int
    data: bytes
    wire_len: int


def record(ts_ns, frame, caplen=None):
    """A record of `frame` (scapy packet or bytes), cut to `caplen` captured bytes when given."""
    data = frame if isinstance(frame, (bytes, bytearray)) else raw(frame)
    return Record(ts_ns, bytes(data[:caplen] if caplen is not None else data), len(data))


def snap(records, snaplen):
    """The records as a capture with this snap length would hold them."""
    return [Record(r.ts_ns, r.data[:snaplen], r.wire_len) for r in records]


# --- frames -------------------------------------------------------------------------------------

def ether(vlans=(), dst=DST_MAC, src=SRC_MAC):
    """Ethernet with tags outermost first: (0x88a8, vid) for 802.1ad, (0x8100, vid) for 802.1Q."""
    p = Ether(src=src, dst=dst)
    for tpid, vid in vlans:
        p = p / (Dot1AD(vlan=vid) if tpid == 0x88A8 else Dot1Q(vlan=vid))
    return p


def ip_layer(src, dst, dscp=26, ecn=0b10, options=None, **kw):
    tos = (dscp << 2) | ecn
    if ":" in src:
        return IPv6(src=src, dst=dst, tc=tos, fl=0, **kw)
    return IP(src=src, dst=dst, tos=tos, options=options or [], **kw)


def reth(va=0x10000, rkey=0x1234, dma_len=0):
    return struct.pack("!QII", va, rkey, dma_len)


def aeth(syndrome, msn=0):
    return struct.pack("!I", (syndrome << 24) | msn)


def immdt(value):
    return struct.pack("!I", value)


def deth(qkey=0x11111111, src_qp=0x2):
    return struct.pack("!II", qkey, src_qp)


def roce(src="198.18.0.1", dst="198.18.0.2", opcode=WRITE_ONLY, qp=0x101, psn=0, ext=b"",
         payload=0, ecn=0b10, dscp=26, sport=49152, vlans=(), ip_options=None, becn=0):
    """A RoCEv2 frame: `ext` are the extended headers (RETH/AETH/ImmDt/DETH bytes), then `payload`
    bytes, then the ICRC (scapy's, for IPv4; a placeholder for IPv6)."""
    icrc = IPV6_ICRC_PLACEHOLDER if ":" in src else None
    bth = BTH(opcode=opcode, dqpn=qp, psn=psn & 0xFFFFFF, becn=becn, icrc=icrc)
    return (ether(vlans) / ip_layer(src, dst, dscp, ecn, ip_options) / UDP(sport=sport, dport=ROCE_PORT)
            / bth / Raw(ext + bytes(payload)))


def cnp_frame(src="198.18.0.2", dst="198.18.0.1", qp=0x101, ecn=0b10, vlans=(), sport=49200,
              dscp=48):
    """A CNP as ConnectX sends it: DSCP 48 (its cnp_dscp), BECN, 16 reserved bytes, ICRC (IPv4)."""
    if ":" in src:
        bth = BTH(opcode=CNP, becn=1, dqpn=qp, icrc=IPV6_ICRC_PLACEHOLDER) / Raw(bytes(16))
    else:
        bth = cnp(qp)
    return ether(vlans) / ip_layer(src, dst, dscp, ecn) / UDP(sport=sport, dport=ROCE_PORT) / bth


def udp_frame(sport=40000, dport=53, payload=32, src="198.18.0.1", dst="198.18.0.9"):
    return ether() / ip_layer(src, dst, 0, 0) / UDP(sport=sport, dport=dport) / Raw(bytes(payload))


def tcp_frame(dport=ROCE_PORT, payload=40):
    return ether() / ip_layer("198.18.0.1", "198.18.0.9", 0, 0) / TCP(sport=40001, dport=dport) / Raw(bytes(payload))


def arp_frame():
    return Ether(src=SRC_MAC, dst="ff:ff:ff:ff:ff:ff") / ARP(psrc="198.18.0.1", pdst="198.18.0.2")


def ipv4_later_fragment():
    """A non-first IPv4 fragment of a UDP datagram whose bytes look like UDP to 4791 + BTH."""
    body = struct.pack("!HHHH", 49152, ROCE_PORT, 8 + 12 + 4, 0) + bytes([WRITE_ONLY]) + bytes(15)
    return ether() / IP(src="198.18.0.1", dst="198.18.0.2", proto=17, frag=100) / Raw(body)


def router_alert():
    return [IPOption_Router_Alert()]


def pfc_frame(class_enable, quanta):
    """802.1Qbb PFC: class-enable vector and eight quanta ({priority: quanta} or a list of 8)."""
    if isinstance(quanta, dict):
        quanta = [quanta.get(p, 0) for p in range(8)]
    body = struct.pack("!HH8H", 0x0101, class_enable, *quanta)
    return Ether(src="02:00:00:00:00:10", dst=PFC_MAC, type=0x8808) / Raw(body + bytes(46 - len(body)))


def pause_frame(quanta):
    body = struct.pack("!HH", 0x0001, quanta)
    return Ether(src="02:00:00:00:00:10", dst=PFC_MAC, type=0x8808) / Raw(body + bytes(46 - len(body)))


# --- ICRC, written from IBTA Annex A17 (checked against scapy's for IPv4) -----------------------

def icrc(frame_bytes, l3_offset):
    """The ICRC (as it appears on the wire) of the RoCEv2 frame whose IP header starts at
    `l3_offset`: CRC-32 over 8 bytes of ones and the IP packet with its variant fields set to
    ones, without the trailing ICRC."""
    pkt = bytearray(frame_bytes[l3_offset:-4])
    version = pkt[0] >> 4
    if version == 4:
        ihl = (pkt[0] & 0x0F) * 4
        pkt[1] = 0xFF                 # TOS
        pkt[8] = 0xFF                 # TTL
        pkt[10:12] = b"\xff\xff"      # header checksum
        udp = ihl
    else:
        pkt[0] |= 0x0F                # traffic class and flow label
        pkt[1:4] = b"\xff\xff\xff"
        pkt[7] = 0xFF                 # hop limit
        udp = 40
    pkt[udp + 6:udp + 8] = b"\xff\xff"  # UDP checksum
    pkt[udp + 8 + 4] = 0xFF             # BTH FECN, BECN, resv6
    return struct.pack("<I", zlib.crc32(b"\xff" * 8 + bytes(pkt)) & 0xFFFFFFFF)


# --- files --------------------------------------------------------------------------------------

def pcap_bytes(records, nano=False, big_endian=False, snaplen=65535, linktype=1):
    """Classic pcap; `nano` selects the nanosecond magic. Microsecond files drop sub-us digits."""
    e = ">" if big_endian else "<"
    out = [struct.pack(e + "IHHiIII", 0xA1B23C4D if nano else 0xA1B2C3D4, 2, 4, 0, 0, snaplen, linktype)]
    for r in records:
        sec, frac = divmod(r.ts_ns, 10**9)
        out.append(struct.pack(e + "IIII", sec, frac if nano else frac // 1000, len(r.data), r.wire_len))
        out.append(r.data)
    return b"".join(out)


def _block(e, block_type, body):
    body += bytes(-len(body) % 4)
    total = 12 + len(body)
    return struct.pack(e + "II", block_type, total) + body + struct.pack(e + "I", total)


def _option(e, code, value):
    return struct.pack(e + "HH", code, len(value)) + value + bytes(-len(value) % 4)


def pcapng_bytes(records, tsresols=(9,), tsoffset_s=0, big_endian=False, snaplen=0, speeds_bps=()):
    """pcapng: one section, one interface per entry of `tsresols` (if_tsresol exponent of 10),
    records spread over the interfaces in turn, if_tsoffset in seconds on every interface, and
    if_speed from `speeds_bps` (one per interface; 0 or none: no if_speed)."""
    e = ">" if big_endian else "<"
    out = [_block(e, 0x0A0D0D0A, struct.pack(e + "IHHq", 0x1A2B3C4D, 1, 0, -1))]
    for n, res in enumerate(tsresols):
        opts = _option(e, 9, bytes([res]))
        if n < len(speeds_bps) and speeds_bps[n]:
            opts += _option(e, 8, struct.pack(e + "Q", speeds_bps[n]))
        if tsoffset_s:
            opts += _option(e, 14, struct.pack(e + "q", tsoffset_s))
        opts += struct.pack(e + "HH", 0, 0)
        out.append(_block(e, 1, struct.pack(e + "HHI", 1, 0, snaplen) + opts))
    for i, r in enumerate(records):
        iface = i % len(tsresols)
        units = (r.ts_ns - tsoffset_s * 10**9) // 10 ** (9 - tsresols[iface])
        body = struct.pack(e + "IIIII", iface, units >> 32, units & 0xFFFFFFFF, len(r.data), r.wire_len)
        out.append(_block(e, 6, body + r.data))
    return b"".join(out)


def write(path, data):
    with open(path, "wb") as f:
        f.write(data)
    return str(path)
