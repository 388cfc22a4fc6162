#!/usr/bin/env bash
# Installs, from Debian packages, everything rocehil's build, tests and demo use.
# Idempotent: packages already present are skipped, and apt is not touched when nothing is missing.
# Never prompts: tshark's debconf question (may non-root users capture?) is pre-answered "no".
set -euo pipefail

packages=(
  # toolchain
  build-essential cmake pkg-config clang libclang-rt-14-dev clang-format
  # libraries
  libibverbs-dev librdmacm-dev ibverbs-utils libpcap-dev libdpdk-dev libboost-dev libboost-filesystem-dev
  libcli11-dev libgtest-dev libgmock-dev nlohmann-json3-dev libyaml-cpp-dev libfmt-dev libsqlite3-dev
  # the agents' control channel: TLS 1.3 on the run's secret
  libssl-dev
  # the package's own checks: lintian on the .deb, man to read the page it installs
  lintian man-db
  # perftest: the engine rocehil runs on request and calibrates its own numbers against
  perftest
  # iperf3: the engine of workload iperf3, background traffic that is not RDMA
  iperf3
  # capture tools the tests compare against, and the packet builder they use
  tshark tcpdump python3 python3-scapy python3-yaml
  # the independent TLS server the dialing agent is tested against (openssl s_server)
  openssl
  # the virtual fabric, and what its tests check it with
  iproute2 nftables ethtool openssh-server openssh-client procps iputils-ping util-linux
  # the switches' view: SNMP agents and LLDP in the testbed's switches, net-snmp's tools the
  # tests read them with, and the library rocehil polls real switches with
  snmpd snmp lldpd libsnmp-dev
  # `testbed up --routing bgp`: zebra, bgpd and bfdd in every switch, and vtysh to read them
  frr
  # the reference launcher bench/fanout measures rocehil's against
  pdsh
  # the reference bench/trend reads the history with
  sqlite3
  # `testbed up --vm`: hosts as QEMU guests with kernel soft-RoCE (rdma_rxe) and the same
  # rdma-core and perftest; an initramfs of static busybox and the kernel's modules
  qemu-system-x86 busybox-static kmod cpio rdma-core ibverbs-providers rdmacm-utils
  # the Slurm launcher, and the real Slurm cluster `testbed up --slurm` runs to test it
  munge slurmctld slurmd slurm-client
  # independent readers the report tests check rocehil's output with: SciPy's Mann-Whitney U,
  # a JUnit XML reader, the Prometheus client's OpenMetrics parser, Chromium rendering
  # report.html headless (with a font, so text has glyphs) and PIL reading its screenshot
  python3-scipy python3-junitparser python3-prometheus-client python3-pil chromium
  fonts-dejavu-core
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q '^install ok installed$'; then
    missing+=("$p")
  fi
done

here=$(dirname "$0")
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages present"
  # The guests' kernel: Debian 12's own, unpacked into a cache, never installed.
  exec bash "$here/guest-kernel.sh"
fi

if [ "$(id -u)" -ne 0 ]; then
  echo "install-deps: missing ${missing[*]}; run as root (sudo $0) to install them" >&2
  exit 2
fi

echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
echo "wireshark-common wireshark-common/install-setuid boolean false" | debconf-set-selections
apt-get update -q
apt-get install -y -q --no-install-recommends "${missing[@]}"
bash "$here/guest-kernel.sh"
