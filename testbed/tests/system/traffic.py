"""UDP senders and receivers run inside testbed namespaces, independent of rocehil's own code.

Run as `ip netns exec NS python3 traffic.py send|recv ...`; each prints one JSON line.
"""
import json
import select
import struct
import socket
import sys
import time

IP_RECVTOS = 13  # Linux <netinet/in.h>
SO_TIMESTAMPNS = 35  # Linux <asm-generic/socket.h>; the cmsg type is the same number
ROCE_PORT = 4791


def send(args):
    """send SRC DST SPORT[,SPORT..] COUNT PAYLOAD TOS GAP_US: COUNT datagrams from each port."""
    src, dst, ports, count, payload, tos, gap_us = args
    ports = [int(p) for p in ports.split(",")]
    count, gap = int(count), int(gap_us) / 1e6
    data = bytes(int(payload))
    sent = 0
    socks = []
    for port in ports:
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4 << 20)
        s.setsockopt(socket.IPPROTO_IP, socket.IP_TOS, int(tos, 0))
        s.bind((src, port))
        socks.append(s)
    for s in socks:
        for _ in range(count):
            while True:
                try:
                    s.sendto(data, (dst, ROCE_PORT))
                    break
                except BlockingIOError:
                    time.sleep(0.0001)
            sent += 1
            if gap:
                time.sleep(gap)
    print(json.dumps({"sent": sent}), flush=True)


def recv(args):
    """recv ADDR QUIET_MS: counts datagrams to ADDR:4791 and their ECN field until QUIET_MS of silence."""
    addr, quiet_ms = args
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 16 << 20)
    s.setsockopt(socket.IPPROTO_IP, IP_RECVTOS, 1)
    s.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)
    s.bind((addr, ROCE_PORT))
    print(json.dumps({"ready": True}), flush=True)
    ecn = {"not-ect": 0, "ect1": 0, "ect0": 0, "ce": 0}
    names = ["not-ect", "ect1", "ect0", "ce"]
    received = 0
    payload_bytes = 0
    first_ns = last_ns = None
    timeout = int(quiet_ms) / 1000
    started = False
    while True:
        ready, _, _ = select.select([s], [], [], timeout if started else 30)
        if not ready:
            break
        started = True
        data, ancillary, _, _ = s.recvmsg(65536, socket.CMSG_SPACE(4) + socket.CMSG_SPACE(16))
        received += 1
        payload_bytes += len(data)
        for level, kind, value in ancillary:
            if level == socket.IPPROTO_IP and kind == socket.IP_TOS:
                ecn[names[value[0] & 3]] += 1
            elif level == socket.SOL_SOCKET and kind == SO_TIMESTAMPNS:
                # The kernel's arrival time, not when this loop got to the datagram.
                seconds, nanoseconds = struct.unpack("qq", value[:16])
                last_ns = seconds * 1_000_000_000 + nanoseconds
                first_ns = first_ns if first_ns is not None else last_ns
    span_ns = (last_ns - first_ns) if received > 1 else 0
    print(json.dumps({"received": received, "ecn": ecn, "payload_bytes": payload_bytes,
                      "arrival_span_ns": span_ns}), flush=True)


if __name__ == "__main__":
    {"send": send, "recv": recv}[sys.argv[1]](sys.argv[2:])
