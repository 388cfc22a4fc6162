#include "rocehil/capture/pcap_source.hpp"

#include <gtest/gtest.h>
#include <pcap/pcap.h>

#include <string>
#include <vector>

#include "addresses.hpp"
#include "rocehil/capture/frame_builder.hpp"
#include "rocehil/common/error.hpp"

namespace rocehil::capture {
namespace {

using testing::doc_v6;
using testing::v4;

// Runs the filter the way the kernel would, with libpcap's own BPF interpreter, on a frame.
bool filter_accepts(CaptureFilter filter, const std::vector<std::uint8_t>& frame) {
  const std::string expression = bpf_expression(filter);
  if (expression.empty()) return true;
  pcap_t* dead = pcap_open_dead(DLT_EN10MB, 262144);
  bpf_program program{};
  EXPECT_EQ(pcap_compile(dead, &program, expression.c_str(), 1, PCAP_NETMASK_UNKNOWN), 0)
      << pcap_geterr(dead);
  pcap_pkthdr header{};
  header.caplen = header.len = static_cast<bpf_u_int32>(frame.size());
  const bool accepted = pcap_offline_filter(&program, &header, frame.data()) != 0;
  pcap_freecode(&program);
  pcap_close(dead);
  return accepted;
}

struct Sample {
  const char* name;
  std::vector<std::uint8_t> frame;
  bool roce, cnp_pfc;
};

std::vector<Sample> samples() {
  RoceFrame write;  // RC WRITE_ONLY over IPv4
  RoceFrame tagged;
  tagged.vlans = {{0x8100, 5}};
  RoceFrame double_tagged;
  double_tagged.vlans = {{0x88a8, 7}, {0x8100, 5}};
  RoceFrame v6;
  v6.src = doc_v6(1);
  v6.dst = doc_v6(2);
  RoceFrame cnp = cnp_frame(v4(198, 18, 1, 10), v4(198, 18, 2, 10), 0x101);
  RoceFrame tagged_cnp = cnp;
  tagged_cnp.vlans = {{0x8100, 5}};
  RoceFrame double_tagged_cnp = cnp;
  double_tagged_cnp.vlans = {{0x88a8, 7}, {0x8100, 5}};
  RoceFrame v6_cnp = cnp_frame(doc_v6(1), doc_v6(2), 0x102);
  RoceFrame other_udp;  // not RoCE: another destination port
  std::vector<std::uint8_t> other = build(other_udp);
  other[14 + 20 + 2] = 0x10;  // UDP destination port 4791 -> 0x10b7
  std::array<std::uint16_t, 8> quanta{};
  quanta[3] = 0xffff;
  return {
      {"write", build(write), true, false},
      {"tagged write", build(tagged), true, false},
      {"double tagged write", build(double_tagged), true, false},
      {"ipv6 write", build(v6), true, false},
      {"cnp", build(cnp), true, true},
      {"tagged cnp", build(tagged_cnp), true, true},
      {"double tagged cnp", build(double_tagged_cnp), true, true},
      {"ipv6 cnp", build(v6_cnp), true, true},
      {"pfc", build_pfc(1u << 3, quanta), true, true},
      {"pause", build_pause(0xffff), true, true},
      {"udp to another port", other, false, false},
  };
}

TEST(CaptureFilter, BpfKeepsExactlyWhatTheFilterNames) {
  for (const Sample& s : samples()) {
    SCOPED_TRACE(s.name);
    EXPECT_TRUE(filter_accepts(CaptureFilter::all, s.frame));
    EXPECT_EQ(filter_accepts(CaptureFilter::roce, s.frame), s.roce);
    EXPECT_EQ(filter_accepts(CaptureFilter::cnp_pfc, s.frame), s.cnp_pfc);
  }
}

TEST(CaptureFilter, Names) {
  EXPECT_STREQ(to_string(CaptureFilter::all), "all");
  EXPECT_STREQ(to_string(CaptureFilter::roce), "roce");
  EXPECT_STREQ(to_string(CaptureFilter::cnp_pfc), "cnp-pfc");
  EXPECT_EQ(bpf_expression(CaptureFilter::all), "");
  for (const CaptureFilter f : {CaptureFilter::all, CaptureFilter::roce, CaptureFilter::cnp_pfc})
    EXPECT_EQ(capture_filter_from(to_string(f)), f);
  EXPECT_EQ(capture_filter_from("tcp"), std::nullopt);
  EXPECT_EQ(capture_filter_from(""), std::nullopt);
}

TEST(PcapSource, RefusesAnInterfaceThatDoesNotExist) {
  PcapSourceOptions options;
  options.iface = "rocehil-none0";
  try {
    PcapSource::open(options);
    FAIL() << "opened a non-existent interface";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("--iface rocehil-none0"), std::string::npos) << e.what();
    EXPECT_EQ(e.exit_code(), ExitCode::bad_input) << e.what();
  }
}

TEST(PcapSource, RefusesABadSnapLength) {
  PcapSourceOptions options;
  options.iface = "lo";
  options.snaplen = 10;
  EXPECT_THROW(PcapSource::open(options), Error);
  options.iface = "";
  EXPECT_THROW(PcapSource::open(options), Error);
}

}  // namespace
}  // namespace rocehil::capture
