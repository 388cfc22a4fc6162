#!/usr/bin/python3
"""A stand-in for perftest's ib_*_bw / ib_*_lat where no RDMA device exists (this machine, CI).

It takes perftest's command line, does perftest's TCP handshake (the server listens on -p, the
client connects to the address given last) and prints a real perftest table from a fixture, so
the agent's and the controller's handling of a perftest run -- ports, order, output, failures --
runs for real. It measures nothing: the numbers are the fixture's.

Installed as a symlink named like the tool (ib_write_bw -> this file) in a directory put first
on PATH. Environment:
  ROCEHIL_STAND_IN_TABLE  the fixture to print (perftest/tests/data/...)
  ROCEHIL_STAND_IN_TABLE_<tool>  the same for one tool (ROCEHIL_STAND_IN_TABLE_ib_send_lat)
  ROCEHIL_STAND_IN_FAIL   'no-device' (print Debian 12 perftest's no-device lines, exit 1), or
                          'hang' (the client connects, then runs for a minute)
"""
import os
import re
import socket
import sys
import time

NO_DEVICE = (" Did not detect devices \n If device exists, check if driver is up\n"
             " Unable to find the Infiniband/RoCE device\n")


def main(argv):
    if argv[1:2] in (["-V"], ["--version"]):
        print("Version: 6.06")  # what Debian 12's perftest says (and it exits 1)
        return 1
    if argv[1:2] in (["-h"], ["--help"]):
        print("Usage: stand-in\n      --out_json  Save the report in a json file")
        return 0
    if os.environ.get("ROCEHIL_STAND_IN_FAIL") == "no-device":
        sys.stderr.write(NO_DEVICE)
        return 1
    # perftest's client names the server last; every flag's value is a number or a name.
    port = int(argv[argv.index("-p") + 1]) if "-p" in argv else 18515
    server = argv[-1] if re.fullmatch(r"\d+\.\d+\.\d+\.\d+", argv[-1]) else None
    if server is None:
        listener = socket.socket()
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("0.0.0.0", port))
        listener.listen(1)
        connection, _ = listener.accept()
        connection.recv(64)  # until the client closes
        connection.close()
    else:
        try:
            connection = socket.create_connection((server, port), timeout=5)
        except OSError:
            sys.stderr.write(f"Couldn't connect to {server}:{port}\n"
                             " Unable to init the socket connection\n")
            return 1
        time.sleep(60 if os.environ.get("ROCEHIL_STAND_IN_FAIL") == "hang" else 0.2)
        connection.close()
    tool = os.path.basename(argv[0])
    fixture = os.environ.get("ROCEHIL_STAND_IN_TABLE_" + tool, os.environ.get(
        "ROCEHIL_STAND_IN_TABLE"))
    with open(fixture) as table:
        sys.stdout.write(table.read())
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
