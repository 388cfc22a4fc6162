// The link speed `rocehil analyze` turns a file's pause quanta into time at: the file's own
// if_speed, read back from a pcapng the capture writer made (as `rocehil capture --write` does).
#include "rocehil/capture/file_link_speed.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <array>
#include <filesystem>
#include <vector>

#include "rocehil/capture/pcap_writer.hpp"
#include "rocehil/common/error.hpp"

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
  const LinkSpeed speed = file_link_speed(path, interfaces, std::nullopt);
  EXPECT_EQ(speed.gbps, 10);
  EXPECT_EQ(speed.source, "the file's if_speed (interface 0 'm1')");
  // --link-gbps overrides what the file says, and says so.
  const LinkSpeed given = file_link_speed(path, interfaces, 25.0);
  EXPECT_EQ(given.gbps, 25);
  EXPECT_EQ(given.source, "--link-gbps");
  std::filesystem::remove(path);
}

TEST(FileLinkSpeed, WithoutASpeedInTheFileTheDefaultIsSaidToBeAssumed) {
  const std::string pcap = written(FileFormat::pcap_ns, {});
  const LinkSpeed speed = file_link_speed(pcap, interfaces_of(pcap), std::nullopt);
  EXPECT_EQ(speed.gbps, 100);
  EXPECT_NE(speed.source.find("assumed: the file records no interface speed"), std::string::npos);
  std::filesystem::remove(pcap);
  const std::string veth = written(
      FileFormat::pcapng, {.name = "veth0", .description = "", .bpf_filter = "", .speed_bps = 0});
  EXPECT_NE(file_link_speed(veth, interfaces_of(veth), std::nullopt)
                .source.find("interfaces state no if_speed"),
            std::string::npos);
  std::filesystem::remove(veth);
}

TEST(FileLinkSpeed, InterfacesThatDisagreeAreRefusedWithTheWayOut) {
  const std::vector<FileInterface> two = {{0, 0, "m1", 10'000'000'000},
                                          {0, 1, "m2", 100'000'000'000}};
  try {
    file_link_speed("merged.pcapng", two, std::nullopt);
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_EQ(e.exit_code(), ExitCode::bad_input);
    EXPECT_NE(std::string(e.what()).find("merged.pcapng: interface 0 'm1' was captured at 10 Gb/s "
                                         "and interface 1 'm2' at 100 Gb/s"),
              std::string::npos)
        << e.what();
  }
  EXPECT_EQ(file_link_speed("merged.pcapng", two, 40.0).gbps, 40);  // the user chose
}

}  // namespace
}  // namespace rocehil::capture
