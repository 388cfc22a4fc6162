// The verbs provider on a real RNIC (ctest label hw). Every test skips, saying why, when the host
// has no RDMA device; the GPU test also needs the CUDA driver. Loopback runs between two QPs of
// one device, so one host with one RoCE port is enough.
//
// Which device: ROCEHIL_VERBS_DEVICE (default: the first), ROCEHIL_VERBS_PORT (1),
// ROCEHIL_VERBS_GID_INDEX (-1: pick by ROCEHIL_VERBS_ADDRESS, or the first RoCEv2 GID),
// ROCEHIL_VERBS_GPU (0).
#include <gtest/gtest.h>

#include <iostream>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include <unistd.h>

#include "rocehil/common/error.hpp"
#include "rocehil/traffic/nic_counters.hpp"
#include "verbs/cuda_memory.hpp"
#include "verbs/gid.hpp"
#include "verbs/queue_pair.hpp"
#include "verbs/verbs_provider.hpp"

namespace rocehil::traffic::verbs {
namespace {

std::string env_or(const char* name, const char* fallback) {
  const char* value = std::getenv(name);
  return value != nullptr ? value : fallback;
}

ProviderOptions options_from_environment() {
  ProviderOptions options;
  options.device = env_or("ROCEHIL_VERBS_DEVICE", "");
  options.port = static_cast<std::uint8_t>(std::stoi(env_or("ROCEHIL_VERBS_PORT", "1")));
  options.gid_index = std::stoi(env_or("ROCEHIL_VERBS_GID_INDEX", "-1"));
  options.address = env_or("ROCEHIL_VERBS_ADDRESS", "");
  return options;
}

void fill_pattern(const MemoryRegion& region, std::uint8_t seed) {
  for (std::uint64_t i = 0; i < region.length; ++i) {
    region.data[i] = static_cast<std::byte>((i * 131 + seed) & 0xff);
  }
}

// A signaled RDMA WRITE of `length` bytes from the start of `source`.
SendRequest write_of(std::uint64_t wr_id, const MemoryRegion& source, std::uint32_t length,
                     std::uint64_t remote_address, std::uint32_t rkey) {
  return SendRequest{.wr_id = wr_id,
                     .opcode = Opcode::write,
                     .local = &source,
                     .length = length,
                     .remote_address = remote_address,
                     .rkey = rkey};
}

class VerbsHw : public ::testing::Test {
 protected:
  void SetUp() override {
    if (DeviceList::get().devices().empty()) {
      GTEST_SKIP() << "no RDMA device: ibv_get_device_list found 0 devices";
    }
    try {
      provider_ = std::make_unique<VerbsProvider>(options_from_environment());
    } catch (const Error& error) {
      GTEST_SKIP() << "RDMA device present but not usable for RoCEv2 (choose one with "
                      "ROCEHIL_VERBS_DEVICE/_PORT/_GID_INDEX): "
                   << error.what();
    }
    cq_ = provider_->create_cq(1024);
  }

  std::unique_ptr<QueuePair> make_qp(QpType type = QpType::rc, std::uint32_t max_inline = 0) {
    QpOptions options;
    options.type = type;
    options.max_inline = max_inline;
    options.mtu = 1024;
    options.ack_timeout_us = 16384;  // loopback never needs it; a failing test ends sooner
    return provider_->create_qp(*cq_, options);
  }

  // Two RC QPs of the device connected to each other, and a source and a target region of
  // `bytes` each.
  struct Loopback {
    std::unique_ptr<QueuePair> a, b;
    MemoryRegion source, target;
  };
  Loopback connected_pair(std::uint64_t bytes) {
    Loopback l{make_qp(), make_qp(), provider_->register_memory(bytes),
               provider_->register_memory(bytes)};
    connect_pair(*l.a, *l.b);
    return l;
  }

  static void connect_pair(QueuePair& a, QueuePair& b) {
    const Endpoint a_end = a.local_endpoint();
    const Endpoint b_end = b.local_endpoint();
    a.connect(b_end);
    b.connect(a_end);
  }

  // Polls until `count` completions arrived or 5 s passed.
  std::vector<Completion> wait_for(std::size_t count) {
    std::vector<Completion> got;
    std::array<Completion, 16> batch{};
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (got.size() < count && std::chrono::steady_clock::now() < deadline) {
      const std::size_t n = cq_->poll(batch);
      got.insert(got.end(), batch.begin(), batch.begin() + static_cast<std::ptrdiff_t>(n));
    }
    EXPECT_EQ(got.size(), count) << "completions within 5 s";
    return got;
  }

  static const Completion* find(const std::vector<Completion>& completions, std::uint64_t wr_id) {
    const auto it = std::find_if(completions.begin(), completions.end(),
                                 [&](const Completion& c) { return c.wr_id == wr_id; });
    return it == completions.end() ? nullptr : &*it;
  }

  std::unique_ptr<VerbsProvider> provider_;
  std::unique_ptr<CompletionQueue> cq_;
};

TEST_F(VerbsHw, RcWriteLoopbackPlacesTheData) {
  auto [a, b, source, target] = connected_pair(64 * 1024);
  fill_pattern(source, 7);

  const SendRequest write = write_of(11, source, 64 * 1024, target.remote_address, target.rkey);
  ASSERT_EQ(a->post_send({&write, 1}), PostResult::ok);
  const std::vector<Completion> done = wait_for(1);
  ASSERT_EQ(done.size(), 1u);
  EXPECT_EQ(done[0].wr_id, 11u);
  EXPECT_EQ(done[0].status, WcStatus::success);
  EXPECT_EQ(done[0].opcode, Opcode::write);
  EXPECT_EQ(done[0].qpn, a->qpn());
  EXPECT_EQ(std::memcmp(source.data, target.data, 64 * 1024), 0);
  EXPECT_EQ(a->counters().bytes_sent, 64u * 1024);
}

TEST_F(VerbsHw, UnsignaledWritesRetireWithTheNextSignaledOne) {
  auto [a, b, source, target] = connected_pair(4096);
  fill_pattern(source, 3);
  std::vector<SendRequest> list;
  for (std::uint32_t i = 0; i < 4; ++i) {
    list.push_back(SendRequest{.wr_id = i,
                               .opcode = Opcode::write,
                               .local = &source,
                               .local_offset = i * 1024,
                               .length = 1024,
                               .remote_address = target.remote_address + i * 1024,
                               .rkey = target.rkey,
                               .signaled = i == 3});
  }
  ASSERT_EQ(a->post_send(list), PostResult::ok);
  const std::vector<Completion> done = wait_for(1);
  ASSERT_EQ(done.size(), 1u);
  EXPECT_EQ(done[0].wr_id, 3u);
  EXPECT_EQ(std::memcmp(source.data, target.data, 4096), 0);
  EXPECT_EQ(a->counters().bytes_sent, 4096u);
}

TEST_F(VerbsHw, WriteWithImmediateConsumesAReceive) {
  auto [a, b, source, target] = connected_pair(4096);
  fill_pattern(source, 1);
  const RecvRequest receive{.wr_id = 21, .local = &target, .length = 0};
  ASSERT_EQ(b->post_recv({&receive, 1}), PostResult::ok);
  const SendRequest write{.wr_id = 22,
                          .opcode = Opcode::write_with_imm,
                          .local = &source,
                          .length = 1000,
                          .remote_address = target.remote_address,
                          .rkey = target.rkey,
                          .imm = 0xdeadbeef};
  ASSERT_EQ(a->post_send({&write, 1}), PostResult::ok);

  const std::vector<Completion> done = wait_for(2);
  const Completion* sent = find(done, 22);
  const Completion* received = find(done, 21);
  ASSERT_NE(sent, nullptr);
  ASSERT_NE(received, nullptr);
  EXPECT_EQ(sent->status, WcStatus::success);
  EXPECT_EQ(sent->opcode, Opcode::write_with_imm);
  EXPECT_EQ(received->status, WcStatus::success);
  EXPECT_EQ(received->opcode, Opcode::recv);
  EXPECT_EQ(received->qpn, b->qpn());
  EXPECT_EQ(received->byte_len, 1000u);
  EXPECT_TRUE(received->has_imm);
  EXPECT_EQ(received->imm, 0xdeadbeefu);  // host order
  EXPECT_EQ(std::memcmp(source.data, target.data, 1000), 0);
}

TEST_F(VerbsHw, SendLandsInTheReceiveAndReadFetches) {
  auto a = make_qp(QpType::rc, 64);
  auto b = make_qp();
  connect_pair(*a, *b);
  const MemoryRegion mine = provider_->register_memory(8192);
  const MemoryRegion theirs = provider_->register_memory(8192);
  fill_pattern(mine, 5);
  fill_pattern(theirs, 9);

  const RecvRequest receive{.wr_id = 31, .local = &theirs, .local_offset = 4096, .length = 4096};
  ASSERT_EQ(b->post_recv({&receive, 1}), PostResult::ok);
  const SendRequest requests[] = {
      {.wr_id = 32, .opcode = Opcode::send, .local = &mine, .length = 48},  // inline
      {.wr_id = 33,
       .opcode = Opcode::read,
       .local = &mine,
       .local_offset = 4096,
       .length = 2048,
       .remote_address = theirs.remote_address,
       .rkey = theirs.rkey},
  };
  ASSERT_EQ(a->post_send(requests), PostResult::ok);
  const std::vector<Completion> done = wait_for(3);
  ASSERT_NE(find(done, 31), nullptr);
  EXPECT_EQ(find(done, 31)->byte_len, 48u);
  ASSERT_NE(find(done, 33), nullptr);
  EXPECT_EQ(find(done, 33)->opcode, Opcode::read);
  for (const Completion& c : done) EXPECT_EQ(c.status, WcStatus::success) << c.wr_id;
  EXPECT_EQ(std::memcmp(mine.data, theirs.data + 4096, 48), 0);
  EXPECT_EQ(std::memcmp(mine.data + 4096, theirs.data, 2048), 0);
  EXPECT_EQ(a->counters().bytes_received, 2048u);
}

TEST_F(VerbsHw, BadRkeyIsARemoteAccessError) {
  auto [a, b, source, target] = connected_pair(4096);
  const SendRequest write =
      write_of(41, source, 4096, target.remote_address, target.rkey ^ 0x5a5a00);
  ASSERT_EQ(a->post_send({&write, 1}), PostResult::ok);
  const std::vector<Completion> done = wait_for(1);
  ASSERT_EQ(done.size(), 1u);
  EXPECT_EQ(done[0].wr_id, 41u);
  EXPECT_EQ(done[0].status, WcStatus::remote_access_error);
  ASSERT_NE(done[0].device_status, nullptr);  // and in the NIC's words
  EXPECT_EQ(std::string(done[0].device_status), "remote access error");
  EXPECT_EQ(done[0].opcode, Opcode::write);  // known although the CQE's opcode is undefined
  EXPECT_EQ(a->counters().bytes_sent, 0u);
}

// A peer whose QP is gone (its host crashed, its process was killed) never ACKs: the requester
// retries retry_cnt times and fails the request, in the NIC's words. On rxe, whose retry_cnt 7
// means forever, this passes only because the provider asks for 6 there.
TEST_F(VerbsHw, APeerThatVanishedIsRetryExceededInTheNicsWords) {
  auto [a, b, source, target] = connected_pair(4096);
  b.reset();  // its packets now reach no QP and are dropped unanswered
  const SendRequest write = write_of(42, source, 4096, target.remote_address, target.rkey);
  ASSERT_EQ(a->post_send({&write, 1}), PostResult::ok);
  const std::vector<Completion> done = wait_for(1);
  ASSERT_EQ(done.size(), 1u);
  EXPECT_EQ(done[0].status, WcStatus::retry_exceeded);
  ASSERT_NE(done[0].device_status, nullptr);
  EXPECT_EQ(std::string(done[0].device_status), "transport retry counter exceeded");
  EXPECT_NE(describe_failure(done[0]).find("transport retry counter exceeded"), std::string::npos);
}

// A QP toward a GID no host has: the kernel cannot resolve its Ethernet address when the QP moves
// to RTR (connect throws, naming the address), or, where a router answers for it, the requests
// are never ACKed (retry exceeded). Either way the case ends with the device's words. The address
// is in the testbed's fabric (198.18.0.0/16), where no rack 250 is ever built.
TEST_F(VerbsHw, AQpTowardAGidThatDoesNotExistFailsNamingIt) {
  auto a = make_qp();
  const MemoryRegion source = provider_->register_memory(4096);
  Endpoint nowhere = a->local_endpoint();
  nowhere.address = "198.18.250.250";
  nowhere.gid = format_gid(*gid_from_address(nowhere.address));
  nowhere.qpn = 0x1234;
  try {
    a->connect(nowhere);
  } catch (const Error& error) {
    const std::string what = error.what();
    EXPECT_NE(what.find("INIT->RTR"), std::string::npos) << what;
    EXPECT_NE(what.find("198.18.250.250"), std::string::npos) << what;
    std::cout << "[          ] connect refused: " << what << "\n";
    return;
  }
  const SendRequest write = write_of(43, source, 4096, 0x1000, 0x1234);
  ASSERT_EQ(a->post_send({&write, 1}), PostResult::ok);
  const std::vector<Completion> done = wait_for(1);
  ASSERT_EQ(done.size(), 1u);
  EXPECT_EQ(done[0].status, WcStatus::retry_exceeded);
  ASSERT_NE(done[0].device_status, nullptr);
  std::cout << "[          ] connected; the write ended: " << describe_failure(done[0]) << "\n";
}

TEST_F(VerbsHw, UdSendArrivesWithoutTheGrh) {
  auto a = make_qp(QpType::ud);
  auto b = make_qp(QpType::ud);
  const MemoryRegion source = provider_->register_memory(4096);
  const MemoryRegion target = provider_->register_memory(4096);
  fill_pattern(source, 11);
  const RecvRequest receive{.wr_id = 51, .local = &target, .length = 1024};
  ASSERT_EQ(b->post_recv({&receive, 1}), PostResult::ok);
  const SendRequest send{.wr_id = 52, .opcode = Opcode::send, .local = &source, .length = 300};
  EXPECT_EQ(a->post_send({&send, 1}), PostResult::not_connected);  // no destination yet
  a->connect(b->local_endpoint());
  ASSERT_EQ(a->post_send({&send, 1}), PostResult::ok);
  const std::vector<Completion> done = wait_for(2);
  ASSERT_NE(find(done, 51), nullptr);
  EXPECT_EQ(find(done, 51)->status, WcStatus::success);
  EXPECT_EQ(find(done, 51)->byte_len, 300u);
  EXPECT_EQ(std::memcmp(source.data, target.data, 300), 0);
}

TEST_F(VerbsHw, PostsAreCheckedBeforeTheNic) {
  auto a = make_qp();
  auto b = make_qp();
  const MemoryRegion region = provider_->register_memory(4096);
  const SendRequest write = write_of(1, region, 64, region.remote_address, region.rkey);
  EXPECT_EQ(a->post_send({&write, 1}), PostResult::not_connected);
  connect_pair(*a, *b);
  const std::vector<SendRequest> too_many(129, write);  // default depth 128
  EXPECT_EQ(a->post_send(too_many), PostResult::queue_full);
  SendRequest outside = write;
  outside.local_offset = 4090;
  EXPECT_EQ(a->post_send({&outside, 1}), PostResult::invalid);
  SendRequest recv_opcode = write;
  recv_opcode.opcode = Opcode::recv;
  EXPECT_EQ(a->post_send({&recv_opcode, 1}), PostResult::invalid);
  EXPECT_EQ(a->post_send({}), PostResult::ok);
}

TEST_F(VerbsHw, ListsTheDeviceAndReadsItsPortCounters) {
  const DeviceContext& device = provider_->device();
  const std::vector<DeviceInfo> devices = list_devices();
  const auto it = std::find_if(devices.begin(), devices.end(),
                               [&](const DeviceInfo& d) { return d.name == device.name; });
  ASSERT_NE(it, devices.end());
  EXPECT_EQ(it->provider, "verbs");
  EXPECT_NE(it->detail.find("firmware"), std::string::npos) << it->detail;
  EXPECT_NE(std::find(it->addresses.begin(), it->addresses.end(), device.address),
            it->addresses.end());
  const NicCounterSnapshot counters =
      read_nic_counters({.rdma_device = device.name,
                         .port = device.port,
                         .netdev = netdev_with_address(device.address)});
  // An RNIC has the IBTA port counters; soft-RoCE (rxe, as in `testbed up --vm` guests) has
  // none, only its own hw_counters, and says so among the problems.
  const bool ibta = counters.values.contains("counters/port_xmit_data");
  const bool rxe = counters.values.contains("hw_counters/sent_pkts");
  EXPECT_TRUE(ibta || rxe) << "neither counters/port_xmit_data nor hw_counters/sent_pkts";
  if (ibta) {
    EXPECT_TRUE(counters.problems.empty()) << counters.problems.front();
  } else {
    ASSERT_EQ(counters.problems.size(), 1u);
    EXPECT_NE(counters.problems.front().find("has no counters/"), std::string::npos);
  }
  EXPECT_TRUE(counters.values.contains("statistics/rx_bytes"));
}

TEST_F(VerbsHw, GpuMemoryTakesAnRdmaWrite) {
  const std::string cuda = cuda_unavailable_reason();
  if (!cuda.empty()) GTEST_SKIP() << "no CUDA: " << cuda;
  const int gpu = std::stoi(env_or("ROCEHIL_VERBS_GPU", "0"));
  auto a = make_qp();
  auto b = make_qp();
  connect_pair(*a, *b);
  const MemoryRegion source = provider_->register_memory(1 << 20);
  const MemoryRegion target = provider_->register_gpu_memory(gpu, 1 << 20);
  EXPECT_EQ(target.data, nullptr);
  // dma-buf or peer memory, whichever served it; never host.
  EXPECT_NE(target.kind, RegionKind::host);
  EXPECT_EQ(source.kind, RegionKind::host);
  RecordProperty("gpu_registration", std::string(to_string(target.kind)));
  fill_pattern(source, 13);
  const SendRequest write = write_of(61, source, 1 << 20, target.remote_address, target.rkey);
  ASSERT_EQ(a->post_send({&write, 1}), PostResult::ok);
  const std::vector<Completion> done = wait_for(1);
  ASSERT_EQ(done.size(), 1u);
  EXPECT_EQ(done[0].status, WcStatus::success);
  std::vector<std::byte> back(1 << 20);
  provider_->gpu_memory(target)->copy_to_host(0, back);
  EXPECT_EQ(std::memcmp(back.data(), source.data, back.size()), 0);
  provider_->deregister_memory(target);
}

// GPU memory without an RNIC: what a GPU host gives before any registration. Needs libcuda and a
// GPU only, so it runs on a GPU machine whose kernel has no RDMA device.
TEST(CudaMemoryHw, AllocatesWholeGpuPagesCopiesAndExportsADmabuf) {
  const std::string cuda = cuda_unavailable_reason();
  if (!cuda.empty()) GTEST_SKIP() << "no CUDA: " << cuda;
  const int gpu = std::stoi(env_or("ROCEHIL_VERBS_GPU", "0"));
  const CudaMemory memory = CudaMemory::allocate(gpu, 100'000);
  EXPECT_EQ(memory.length(), 2u * 65536);  // whole 64 KiB GPU pages
  EXPECT_NE(memory.device_pointer(), 0u);
  std::vector<std::byte> pattern(memory.length());
  for (std::size_t i = 0; i < pattern.size(); ++i) pattern[i] = std::byte(i * 7 + 3);
  memory.copy_from_host(0, pattern);
  std::vector<std::byte> back(pattern.size());
  memory.copy_to_host(0, back);
  EXPECT_EQ(back, pattern);
  EXPECT_THROW(memory.copy_to_host(1, back), Error);  // one byte past the end

  try {
    const DmabufExport exported = memory.export_dmabuf();
    ASSERT_GE(exported.fd.get(), 0);
    EXPECT_EQ(exported.offset % 4096, memory.device_pointer() % 4096);
    // A dma-buf's size is what lseek to its end says: it covers the allocation from the offset.
    const off_t size = ::lseek(exported.fd.get(), 0, SEEK_END);
    EXPECT_GE(static_cast<std::uint64_t>(size), exported.offset + memory.length());
    EXPECT_EQ(size % ::sysconf(_SC_PAGESIZE), 0);
  } catch (const Error& error) {
    // dma-buf needs the open kernel modules and Linux >= 5.12; peer memory is the fallback.
    GTEST_SKIP() << "allocation and copies checked; no dma-buf export here: " << error.what();
  }
}

}  // namespace
}  // namespace rocehil::traffic::verbs
