// The link speed `rocehil analyze` turns a file's pause quanta into time at: the file's own
// if_speed, read back from a pcapng the capture writer made (as `rocehil capture --write` does).
#include "rocehil/capture/file_link_speed.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <array>
#include <filesystem>
#include <vector>

#include "rocehil/capture/pcap_writer.hpp"

namespace rocehil::capture {
namespace {

std::string written(FileFormat format, const InterfaceInfo& iface) {
  const std::string path =
      (std::filesystem::temp_directory_path() / ("rocehil-speed-" + std::to_string(::getpid()) +
                                                 "-" + std::to_string(static_cast<int>(format))))
          .string();
  PcapWriter w(path, format, 256, iface);
  const std::vector<std::uint8_t> frame(64, 0xab);
  w.write(1'000'000'000, frame);
  w.close();
  return path;
}

std::vector<FileInterface> interfaces_of(const std::string& path) {
  auto source = FileSource::open(path);
  std::array<Frame, 4> batch;
  while (source->next_batch(batch) > 0) {
  }
  return source->interfaces();
}

TEST(FileLinkSpeed, APcapngIsReadAtTheSpeedItWasCapturedAt) {
  const std::string path =
      written(FileFormat::pcapng,
              {.name = "m1", .description = "pcap", .bpf_filter = "", .speed_bps = 10'000'000'000});
  const auto interfaces = interfaces_of(path);
  ASSERT_EQ(interfaces.size(), 1u);
  EXPECT_EQ(interfaces[0].name, "m1");
  EXPECT_EQ(interfaces[0].speed_bps, 10'000'000'000u);
  const LinkSpeed speed = file_link_speed(interfaces, std::nullopt);
  EXPECT_EQ(speed.gbps, 10);
  EXPECT_EQ(speed.source, "the file's if_speed (interface 0 'm1')");
  // --link-gbps overrides what the file says, and says so.
  const LinkSpeed given = file_link_speed(interfaces, 25.0);
  EXPECT_EQ(given.gbps, 25);
  EXPECT_EQ(given.source, "--link-gbps");
  std::filesystem::remove(path);
}

TEST(FileLinkSpeed, WithoutASpeedInTheFileTheDefaultIsSaidToBeAssumed) {
  const std::string pcap = written(FileFormat::pcap_ns, {});
  const LinkSpeed speed = file_link_speed(interfaces_of(pcap), std::nullopt);
  EXPECT_EQ(speed.gbps, 100);
  EXPECT_NE(speed.source.find("assumed: the file records no interface speed"), std::string::npos);
  std::filesystem::remove(pcap);
  const std::string veth = written(
      FileFormat::pcapng, {.name = "veth0", .description = "", .bpf_filter = "", .speed_bps = 0});
  EXPECT_NE(file_link_speed(interfaces_of(veth), std::nullopt)
                .source.find("interfaces state no if_speed"),
            std::string::npos);
  std::filesystem::remove(veth);
}

TEST(FileLinkSpeed, InterfacesThatDisagreeEachKeepTheirOwnSpeed) {
  const std::vector<FileInterface> three = {
      {0, 0, "m1", 10'000'000'000}, {0, 1, "m2", 100'000'000'000}, {1, 0, "", 0}};
  const LinkSpeed speed = file_link_speed(three, std::nullopt);
  EXPECT_EQ(speed.gbps, 10);
  EXPECT_EQ(speed.by_interface, (std::vector<double>{10, 100, 10}));
  EXPECT_EQ(speed.source,
            "each interface's if_speed: interface 0 'm1' 10 Gb/s, interface 1 'm2' 100 Gb/s, "
            "section 1 interface 0 10 Gb/s (states none: the first's)");
  // Interfaces that agree (or say nothing) are one speed; the user's choice is every interface's.
  EXPECT_TRUE(file_link_speed({three[0], three[2]}, std::nullopt).by_interface.empty());
  const LinkSpeed given = file_link_speed(three, 40.0);
  EXPECT_EQ(given.gbps, 40);
  EXPECT_TRUE(given.by_interface.empty());
}

}  // namespace
}  // namespace rocehil::capture
