#include "dataplane/netlink_routes.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <linux/neighbour.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <future>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "rocehil/common/error.hpp"
#include "tools/process.hpp"

namespace rocehil::testbed::dataplane {
namespace {

using ByteVector = std::vector<std::uint8_t>;

// ---- netlink bytes built by hand, as the uapi headers lay them out ----

template <class T>
ByteVector nl_bytes_of(const T& value) {
  ByteVector out(sizeof value);
  std::memcpy(out.data(), &value, sizeof value);
  return out;
}

void nl_pad(ByteVector& bytes) {
  bytes.resize((bytes.size() + 3) / 4 * 4, 0);
}

ByteVector nl_attribute(std::uint16_t type, const ByteVector& payload) {
  rtattr header{};
  header.rta_len = static_cast<std::uint16_t>(sizeof header + payload.size());
  header.rta_type = type;
  ByteVector out = nl_bytes_of(header);
  out.insert(out.end(), payload.begin(), payload.end());
  nl_pad(out);
  return out;
}

ByteVector nl_address(const char* text) {
  in_addr a{};
  EXPECT_EQ(::inet_pton(AF_INET, text, &a), 1);
  return nl_bytes_of(a.s_addr);
}

std::uint32_t nl_host(const char* text) {
  in_addr a{};
  EXPECT_EQ(::inet_pton(AF_INET, text, &a), 1);
  return ntohl(a.s_addr);
}

template <class Body>
ByteVector nl_message(std::uint16_t type, const Body& body, const std::vector<ByteVector>& attrs) {
  ByteVector payload = nl_bytes_of(body);
  nl_pad(payload);
  for (const ByteVector& a : attrs) payload.insert(payload.end(), a.begin(), a.end());
  nlmsghdr header{};
  header.nlmsg_len = static_cast<std::uint32_t>(sizeof header + payload.size());
  header.nlmsg_type = type;
  header.nlmsg_flags = NLM_F_MULTI;
  ByteVector out = nl_bytes_of(header);
  out.insert(out.end(), payload.begin(), payload.end());
  nl_pad(out);
  return out;
}

ByteVector nl_done() {
  return nl_message(NLMSG_DONE, 0, {});
}

rtmsg nl_rtmsg(std::uint8_t length, std::uint8_t type = RTN_UNICAST,
               std::uint8_t table = RT_TABLE_MAIN) {
  rtmsg r{};
  r.rtm_family = AF_INET;
  r.rtm_dst_len = length;
  r.rtm_table = table;
  r.rtm_type = type;
  return r;
}

ByteVector nl_hop(int ifindex, const char* gateway, std::uint8_t flags = 0) {
  ByteVector attrs = gateway ? nl_attribute(RTA_GATEWAY, nl_address(gateway)) : ByteVector{};
  rtnexthop hop{};
  hop.rtnh_len = static_cast<std::uint16_t>(sizeof hop + attrs.size());
  hop.rtnh_flags = flags;
  hop.rtnh_ifindex = ifindex;
  ByteVector out = nl_bytes_of(hop);
  out.insert(out.end(), attrs.begin(), attrs.end());
  return out;
}

ByteVector nl_concat(const std::vector<ByteVector>& parts) {
  ByteVector out;
  for (const ByteVector& p : parts) out.insert(out.end(), p.begin(), p.end());
  return out;
}

ByteVector nl_hand_built_dump() {
  return nl_concat({
      // 10.9.0.0/16 over two live hops and a dead one.
      nl_message(RTM_NEWROUTE, nl_rtmsg(16),
                 {nl_attribute(RTA_TABLE, nl_bytes_of(std::uint32_t{RT_TABLE_MAIN})),
                  nl_attribute(RTA_DST, nl_address("10.9.0.0")),
                  nl_attribute(RTA_MULTIPATH,
                               nl_concat({nl_hop(3, "10.8.1.2"), nl_hop(4, "10.8.3.2", RTNH_F_DEAD),
                                          nl_hop(5, "10.8.2.2")}))}),
      // The default route, on one hop.
      nl_message(RTM_NEWROUTE, nl_rtmsg(0),
                 {nl_attribute(RTA_GATEWAY, nl_address("10.8.1.2")),
                  nl_attribute(RTA_OIF, nl_bytes_of(3))}),
      // A table of its own (RTA_TABLE past rtm_table's 8 bits): not the FIB's.
      nl_message(
          RTM_NEWROUTE, nl_rtmsg(24, RTN_UNICAST, RT_TABLE_COMPAT),
          {nl_attribute(RTA_TABLE, nl_bytes_of(std::uint32_t{1000})),
           nl_attribute(RTA_DST, nl_address("10.4.0.0")), nl_attribute(RTA_OIF, nl_bytes_of(3))}),
      // The switch's own address, in the local table.
      nl_message(
          RTM_NEWROUTE, nl_rtmsg(32, RTN_LOCAL, RT_TABLE_LOCAL),
          {nl_attribute(RTA_DST, nl_address("10.8.1.1")), nl_attribute(RTA_OIF, nl_bytes_of(3))}),
      nl_message(RTM_NEWROUTE, nl_rtmsg(16, RTN_BLACKHOLE),
                 {nl_attribute(RTA_DST, nl_address("10.7.0.0"))}),
      // A single hop the kernel marks dead: left out.
      nl_message(
          RTM_NEWROUTE,
          [] {
            rtmsg r = nl_rtmsg(32);
            r.rtm_flags = RTNH_F_DEAD;
            return r;
          }(),
          {nl_attribute(RTA_DST, nl_address("10.5.5.5")), nl_attribute(RTA_OIF, nl_bytes_of(4))}),
      nl_message(
          RTM_NEWROUTE, nl_rtmsg(8, RTN_MULTICAST),
          {nl_attribute(RTA_DST, nl_address("224.0.0.0")), nl_attribute(RTA_OIF, nl_bytes_of(3))}),
      nl_done(),
      // Past NLMSG_DONE: not read.
      nl_message(
          RTM_NEWROUTE, nl_rtmsg(8),
          {nl_attribute(RTA_DST, nl_address("11.0.0.0")), nl_attribute(RTA_OIF, nl_bytes_of(3))}),
  });
}

std::string nl_dotted(std::uint32_t host) {
  return std::to_string(host >> 24) + "." + std::to_string((host >> 16) & 0xff) + "." +
         std::to_string((host >> 8) & 0xff) + "." + std::to_string(host & 0xff);
}

// One line a failure prints readably: "local 10.8.1.1/32 [if 3 via 0.0.0.0]".
std::string nl_describe(const Route& r) {
  const char* kinds[] = {"unicast", "local", "unreachable"};
  std::string s = std::string(kinds[static_cast<int>(r.kind)]) + " " + nl_dotted(r.prefix) + "/" +
                  std::to_string(r.length) + " [";
  for (const NextHop& h : r.hops)
    s += "if " + std::to_string(h.ifindex) + " via " + nl_dotted(h.gateway) + ", ";
  return s + "]";
}

TEST(NetlinkRoutes, ParsesAHandBuiltDump) {
  const ByteVector bytes = nl_hand_built_dump();
  bool done = false;
  const std::vector<Route> routes = parse_route_messages(bytes, done);
  EXPECT_TRUE(done);
  std::vector<std::string> got;
  for (const Route& r : routes) got.push_back(nl_describe(r));
  auto route = [](RouteKind kind, const char* prefix, int length, std::vector<NextHop> hops) {
    return nl_describe(Route{nl_host(prefix), length, kind, std::move(hops)});
  };
  EXPECT_EQ(got, (std::vector<std::string>{
                     route(RouteKind::unicast, "10.9.0.0", 16,
                           {{3, nl_host("10.8.1.2")}, {5, nl_host("10.8.2.2")}}),
                     route(RouteKind::unicast, "0.0.0.0", 0, {{3, nl_host("10.8.1.2")}}),
                     route(RouteKind::local, "10.8.1.1", 32, {{3, 0}}),
                     route(RouteKind::unreachable, "10.7.0.0", 16, {}),
                 }));
}

TEST(NetlinkRoutes, ADumpSplitOverReadsIsDoneOnlyAtNlmsgDone) {
  const ByteVector first = nl_message(RTM_NEWROUTE, nl_rtmsg(16, RTN_BLACKHOLE),
                                      {nl_attribute(RTA_DST, nl_address("10.7.0.0"))});
  bool done = false;
  EXPECT_EQ(parse_route_messages(first, done).size(), 1u);
  EXPECT_FALSE(done);
  EXPECT_TRUE(parse_route_messages(nl_done(), done).empty());
  EXPECT_TRUE(done);
}

TEST(NetlinkRoutes, KernelErrorThrowsWithItsErrno) {
  nlmsgerr error{};
  error.error = -EPERM;
  const ByteVector bytes = nl_message(NLMSG_ERROR, error, {});
  bool done = false;
  try {
    parse_route_messages(bytes, done);
    FAIL() << "no throw";
  } catch (const Error& e) {
    EXPECT_EQ(e.exit_code(), ExitCode::infrastructure);
    EXPECT_EQ(e.code(), EPERM);
  }
}

void nl_expect_malformed(const ByteVector& bytes, const char* why) {
  // Exactly the bytes, on the heap: a read past them is a read past the allocation (ASan).
  const ByteVector exact(bytes.begin(), bytes.end());
  bool done = false;
  try {
    parse_route_messages(exact, done);
    ADD_FAILURE() << why << ": no throw";
  } catch (const Error& e) {
    EXPECT_EQ(e.exit_code(), ExitCode::infrastructure) << why;
    EXPECT_NE(std::string(e.what()).find("malformed netlink"), std::string::npos) << e.what();
  }
}

TEST(NetlinkRoutes, MalformedBytesThrowAndAreNeverReadPast) {
  const ByteVector good = nl_message(
      RTM_NEWROUTE, nl_rtmsg(24),
      {nl_attribute(RTA_DST, nl_address("10.1.2.0")), nl_attribute(RTA_OIF, nl_bytes_of(3))});
  nl_expect_malformed(ByteVector(good.begin(), good.begin() + 10), "a truncated nlmsghdr");
  {
    ByteVector b = good;
    const std::uint32_t too_long = static_cast<std::uint32_t>(b.size() + 4);
    std::memcpy(b.data(), &too_long, sizeof too_long);
    nl_expect_malformed(b, "nlmsg_len past the end");
  }
  {
    ByteVector b = good;
    const std::uint32_t too_short = 8;
    std::memcpy(b.data(), &too_short, sizeof too_short);
    nl_expect_malformed(b, "nlmsg_len shorter than its header");
  }
  {
    // The last attribute (RTA_OIF) claims 12 bytes of the 8 it has.
    ByteVector b = good;
    const std::uint16_t rta_len = 12;
    std::memcpy(b.data() + b.size() - 8, &rta_len, sizeof rta_len);
    nl_expect_malformed(b, "rta_len past the end");
  }
  {
    ByteVector b = good;
    const std::uint16_t rta_len = 2;
    std::memcpy(b.data() + b.size() - 8, &rta_len, sizeof rta_len);
    nl_expect_malformed(b, "rta_len shorter than its header");
  }
  nl_expect_malformed(
      nl_message(RTM_NEWROUTE, nl_rtmsg(24), {nl_attribute(RTA_DST, ByteVector{10, 1, 2})}),
      "RTA_DST of 3 bytes");
  nl_expect_malformed(
      nl_message(RTM_NEWROUTE, nl_rtmsg(33), {nl_attribute(RTA_DST, nl_address("10.1.2.0"))}),
      "rtm_dst_len 33");
  nl_expect_malformed(nl_message(RTM_NEWROUTE, std::uint32_t{0}, {}), "a body shorter than rtmsg");
  {
    ByteVector hop = nl_hop(3, "10.8.1.2");
    const std::uint16_t rtnh_len = static_cast<std::uint16_t>(hop.size() + 8);
    std::memcpy(hop.data(), &rtnh_len, sizeof rtnh_len);
    nl_expect_malformed(nl_message(RTM_NEWROUTE, nl_rtmsg(16),
                                   {nl_attribute(RTA_DST, nl_address("10.9.0.0")),
                                    nl_attribute(RTA_MULTIPATH, hop)}),
                        "rtnh_len past RTA_MULTIPATH's end");
  }
}

TEST(NetlinkRoutes, RouteNamingOnlyANexthopObjectSaysHowToGetItsHops) {
  const ByteVector bytes = nl_message(RTM_NEWROUTE, nl_rtmsg(16),
                                      {nl_attribute(RTA_DST, nl_address("10.9.0.0")),
                                       nl_attribute(RTA_NH_ID, nl_bytes_of(std::uint32_t{7}))});
  bool done = true;  // left over from an earlier dump: the parse reads on all the same
  try {
    parse_route_messages(bytes, done);
    FAIL() << "no throw";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("10.9.0.0/16"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("nexthop_compat_mode=1"), std::string::npos) << e.what();
  }
}

TEST(NetlinkRoutes, EveryTruncationOfADumpParsesOrThrowsOurError) {
  const ByteVector whole = nl_hand_built_dump();
  for (std::size_t length = 0; length < whole.size(); ++length) {
    const ByteVector cut(whole.begin(), whole.begin() + static_cast<std::ptrdiff_t>(length));
    bool done = false;
    try {
      parse_route_messages(cut, done);
    } catch (const Error& e) {
      EXPECT_EQ(e.exit_code(), ExitCode::infrastructure);
    }
  }
}

ndmsg nl_ndmsg(int ifindex, std::uint16_t state, std::uint8_t family = AF_INET) {
  ndmsg n{};
  n.ndm_family = family;
  n.ndm_ifindex = ifindex;
  n.ndm_state = state;
  return n;
}

TEST(NetlinkRoutes, NeighboursWithAnAddressAndAMacInAUsableState) {
  const ByteVector mac{2, 0, 0, 0, 0, 1};
  const ByteVector bytes = nl_concat({
      nl_message(RTM_NEWNEIGH, nl_ndmsg(3, NUD_REACHABLE),
                 {nl_attribute(NDA_DST, nl_address("10.8.1.2")), nl_attribute(NDA_LLADDR, mac)}),
      nl_message(RTM_NEWNEIGH, nl_ndmsg(4, NUD_STALE),
                 {nl_attribute(NDA_DST, nl_address("10.8.2.2")), nl_attribute(NDA_LLADDR, mac)}),
      nl_message(RTM_NEWNEIGH, nl_ndmsg(3, NUD_FAILED),
                 {nl_attribute(NDA_DST, nl_address("10.8.1.3"))}),
      nl_message(RTM_NEWNEIGH, nl_ndmsg(3, NUD_INCOMPLETE),
                 {nl_attribute(NDA_DST, nl_address("10.8.1.4"))}),
      nl_message(RTM_NEWNEIGH, nl_ndmsg(3, NUD_NOARP),
                 {nl_attribute(NDA_DST, nl_address("10.8.1.5")), nl_attribute(NDA_LLADDR, mac)}),
      // An IP-in-IP tunnel's 4-byte link address: not Ethernet.
      nl_message(RTM_NEWNEIGH, nl_ndmsg(5, NUD_PERMANENT),
                 {nl_attribute(NDA_DST, nl_address("10.8.1.6")),
                  nl_attribute(NDA_LLADDR, ByteVector{1, 2, 3, 4})}),
      nl_message(RTM_NEWNEIGH, nl_ndmsg(3, NUD_REACHABLE, AF_INET6),
                 {nl_attribute(NDA_DST, ByteVector(16, 0xfe)), nl_attribute(NDA_LLADDR, mac)}),
      nl_done(),
  });
  bool done = false;
  const std::vector<Neighbor> got = parse_neighbor_messages(bytes, done);
  EXPECT_TRUE(done);
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].ifindex, 3);
  EXPECT_EQ(got[0].address, nl_host("10.8.1.2"));
  EXPECT_EQ(got[0].mac, (std::array<std::uint8_t, 6>{2, 0, 0, 0, 0, 1}));
  EXPECT_EQ(got[1].ifindex, 4);
  EXPECT_EQ(got[1].address, nl_host("10.8.2.2"));
  bool done_too = false;
  EXPECT_THROW(parse_neighbor_messages(ByteVector(bytes.begin(), bytes.begin() + 20), done_too),
               Error);
}

// ---- the real kernel: a scratch network namespace, read with rocehil and with `ip -j` ----

bool nl_root() {
  return ::geteuid() == 0 && !find_in_path("ip").empty();
}

// Deleted at the end of the test whatever happened; named by the pid, so parallel runs of the
// tests never meet.
class ScratchNamespace {
 public:
  ScratchNamespace() : name_("rocehil-fibtest-" + std::to_string(::getpid())) {
    run({"ip", "netns", "del", name_});  // a crashed run's, under a recycled pid
    run_checked("creating a scratch namespace", {"ip", "netns", "add", name_});
  }
  ~ScratchNamespace() { run({"ip", "netns", "del", name_}); }
  ScratchNamespace(const ScratchNamespace&) = delete;
  ScratchNamespace& operator=(const ScratchNamespace&) = delete;

  const std::string& name() const { return name_; }

  // `ip -n NAME args...`
  std::string ip(std::vector<std::string> args) const {
    args.insert(args.begin(), {"ip", "-n", name_});
    return run_checked("configuring the scratch namespace", args);
  }

  // `f()` on a thread that entered the namespace: a netlink socket made there stays there.
  template <class F>
  auto inside(F f) const {
    const std::string path = "/run/netns/" + name_;
    return std::async(std::launch::async,
                      [path, f]() mutable {
                        const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
                        if (fd < 0) throw system_error("opening " + path, errno);
                        const int rc = ::setns(fd, CLONE_NEWNET);
                        const int setns_errno = errno;
                        ::close(fd);
                        if (rc != 0) throw system_error("entering " + path, setns_errno);
                        return f();
                      })
        .get();
  }

 private:
  std::string name_;
};

// Two veths (a pair, both ends here) with a subnet each, a route over both, a blackhole, an
// unreachable, a default, an on-link host route, and neighbours in three states.
void nl_build_scratch_fabric(const ScratchNamespace& ns) {
  ns.ip({"link", "set", "lo", "up"});
  ns.ip({"link", "add", "va", "type", "veth", "peer", "name", "vb"});
  ns.ip({"addr", "add", "10.8.1.1/24", "dev", "va"});
  ns.ip({"addr", "add", "10.8.2.1/24", "dev", "vb"});
  ns.ip({"link", "set", "va", "up"});
  ns.ip({"link", "set", "vb", "up"});
  ns.ip({"route", "add", "10.9.0.0/16", "nexthop", "via", "10.8.1.2", "dev", "va", "nexthop", "via",
         "10.8.2.2", "dev", "vb"});
  ns.ip({"route", "add", "blackhole", "10.7.0.0/16"});
  ns.ip({"route", "add", "unreachable", "10.6.0.0/16"});
  ns.ip({"route", "add", "default", "via", "10.8.1.2"});
  ns.ip({"route", "add", "10.5.5.5/32", "dev", "vb"});
  ns.ip({"neigh", "add", "10.8.1.2", "lladdr", "02:00:00:00:01:02", "dev", "va"});
  ns.ip(
      {"neigh", "add", "10.8.2.2", "lladdr", "02:00:00:00:02:02", "dev", "vb", "nud", "reachable"});
  ns.ip({"neigh", "add", "10.8.2.3", "lladdr", "02:00:00:00:02:03", "dev", "vb", "nud", "noarp"});
}

std::map<std::string, int> nl_ifindexes(const ScratchNamespace& ns) {
  std::map<std::string, int> out;
  for (const auto& link : nlohmann::json::parse(ns.ip({"-j", "link", "show"})))
    out[link.at("ifname").get<std::string>()] = link.at("ifindex").get<int>();
  return out;
}

bool nl_has(const nlohmann::json& entry, const char* list, const char* word) {
  if (!entry.contains(list)) return false;
  const auto& words = entry.at(list);
  return std::find(words.begin(), words.end(), word) != words.end();
}

// iproute2's view of the routes, described as nl_describe() describes ours.
std::vector<std::string> nl_routes_by_ip(const ScratchNamespace& ns) {
  const std::map<std::string, int> ifindex = nl_ifindexes(ns);
  std::vector<std::string> out;
  for (const auto& e :
       nlohmann::json::parse(ns.ip({"-4", "-j", "route", "show", "table", "all"}))) {
    const std::string table = e.value("table", "main");
    const std::string type = e.value("type", "unicast");
    if (table != "main" && table != "local") continue;
    Route r;
    if (type == "unicast")
      r.kind = RouteKind::unicast;
    else if (type == "local" || type == "broadcast")
      r.kind = RouteKind::local;
    else if (type == "blackhole" || type == "unreachable" || type == "prohibit" || type == "throw")
      r.kind = RouteKind::unreachable;
    else
      continue;
    std::string dst = e.at("dst").get<std::string>();
    if (dst == "default") dst = "0.0.0.0/0";
    if (dst.find('/') == std::string::npos) dst += "/32";
    const std::string address = dst.substr(0, dst.find('/'));
    r.prefix = nl_host(address.c_str());
    r.length = std::stoi(dst.substr(dst.find('/') + 1));
    auto add_hop = [&](const nlohmann::json& hop, const nlohmann::json& flags_from) {
      if (nl_has(flags_from, "flags", "dead")) return;
      const std::string gateway = hop.value("gateway", "0.0.0.0");
      r.hops.push_back({ifindex.at(hop.at("dev").get<std::string>()), nl_host(gateway.c_str())});
    };
    if (r.kind != RouteKind::unreachable) {
      if (e.contains("nexthops"))
        for (const auto& hop : e.at("nexthops")) add_hop(hop, hop);
      else
        add_hop(e, e);
      if (r.hops.empty()) continue;
    }
    out.push_back(nl_describe(r));
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<std::string> nl_routes_by_rocehil(const ScratchNamespace& ns) {
  std::vector<std::string> out;
  for (const Route& r : ns.inside([] { return dump_routes(); })) out.push_back(nl_describe(r));
  std::sort(out.begin(), out.end());
  return out;
}

std::string nl_describe(const Neighbor& n) {
  std::string s = "if " + std::to_string(n.ifindex) + " " + nl_dotted(n.address) + " ";
  for (const std::uint8_t b : n.mac) s += std::to_string(b) + ":";
  return s;
}

std::vector<std::string> nl_neighbors_by_ip(const ScratchNamespace& ns) {
  const std::map<std::string, int> ifindex = nl_ifindexes(ns);
  std::vector<std::string> out;
  for (const auto& e : nlohmann::json::parse(ns.ip({"-4", "-j", "neigh", "show", "nud", "all"}))) {
    if (nl_has(e, "state", "FAILED") || nl_has(e, "state", "INCOMPLETE") ||
        nl_has(e, "state", "NOARP") || !e.contains("lladdr"))
      continue;
    Neighbor n;
    n.ifindex = ifindex.at(e.at("dev").get<std::string>());
    n.address = nl_host(e.at("dst").get<std::string>().c_str());
    unsigned m[6];
    EXPECT_EQ(std::sscanf(e.at("lladdr").get<std::string>().c_str(), "%x:%x:%x:%x:%x:%x", &m[0],
                          &m[1], &m[2], &m[3], &m[4], &m[5]),
              6);
    for (int i = 0; i < 6; ++i) n.mac[i] = static_cast<std::uint8_t>(m[i]);
    out.push_back(nl_describe(n));
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<std::string> nl_neighbors_by_rocehil(const ScratchNamespace& ns) {
  std::vector<std::string> out;
  for (const Neighbor& n : ns.inside([] { return dump_neighbors(); }))
    out.push_back(nl_describe(n));
  std::sort(out.begin(), out.end());
  return out;
}

TEST(NetlinkRoutesKernel, DumpsAgreeWithIproute2FieldByField) {
  if (!nl_root()) GTEST_SKIP() << "needs root and iproute2 (a scratch network namespace)";
  ScratchNamespace ns;
  nl_build_scratch_fabric(ns);
  const std::map<std::string, int> ifindex = nl_ifindexes(ns);

  const std::vector<std::string> by_ip = nl_routes_by_ip(ns);
  // The comparison covers what matters: the route over two hops, the blackhole, a local address.
  const std::string multipath = nl_describe(
      Route{nl_host("10.9.0.0"),
            16,
            RouteKind::unicast,
            {{ifindex.at("va"), nl_host("10.8.1.2")}, {ifindex.at("vb"), nl_host("10.8.2.2")}}});
  EXPECT_NE(std::find(by_ip.begin(), by_ip.end(), multipath), by_ip.end());
  EXPECT_NE(std::find(by_ip.begin(), by_ip.end(),
                      nl_describe(Route{nl_host("10.7.0.0"), 16, RouteKind::unreachable, {}})),
            by_ip.end());
  EXPECT_NE(std::find(by_ip.begin(), by_ip.end(),
                      nl_describe(Route{
                          nl_host("10.8.1.1"), 32, RouteKind::local, {{ifindex.at("va"), 0}}})),
            by_ip.end());
  EXPECT_EQ(nl_routes_by_rocehil(ns), by_ip);

  const std::vector<std::string> neighbors = nl_neighbors_by_ip(ns);
  EXPECT_EQ(neighbors.size(), 2u);  // the NOARP one is not a neighbour to forward to
  EXPECT_EQ(nl_neighbors_by_rocehil(ns), neighbors);

  // A link down: the kernel marks the hop over it dead and drops the on-link route.
  ns.ip({"link", "set", "vb", "down"});
  const std::vector<std::string> after = nl_routes_by_ip(ns);
  EXPECT_NE(after, by_ip);
  EXPECT_EQ(nl_routes_by_rocehil(ns), after);
  const Fib fib(ns.inside([] { return dump_routes(); }));
  const Route* r = fib.lookup(nl_host("10.9.1.1"));
  ASSERT_NE(r, nullptr);
  ASSERT_EQ(r->hops.size(), 1u);
  EXPECT_EQ(r->hops[0].ifindex, ifindex.at("va"));
}

TEST(NetlinkRoutesKernel, WatchSeesRouteChangesAndNewNeighbours) {
  if (!nl_root()) GTEST_SKIP() << "needs root and iproute2 (a scratch network namespace)";
  ScratchNamespace ns;
  nl_build_scratch_fabric(ns);
  RouteWatch watch = ns.inside([] { return RouteWatch(); });
  EXPECT_GE(watch.fd(), 0);

  std::vector<Neighbor> neighbors;
  ns.ip({"route", "add", "10.4.0.0/16", "via", "10.8.2.2"});
  EXPECT_TRUE(watch.drain(neighbors));

  ns.ip({"neigh", "add", "10.8.1.9", "lladdr", "02:00:00:00:01:09", "dev", "va"});
  ns.ip({"neigh", "add", "10.8.1.10", "lladdr", "02:00:00:00:01:0a", "dev", "va", "nud", "noarp"});
  watch.drain(neighbors);
  ASSERT_EQ(neighbors.size(), 1u);
  EXPECT_EQ(neighbors[0].address, nl_host("10.8.1.9"));
  EXPECT_EQ(neighbors[0].ifindex, nl_ifindexes(ns).at("va"));
  EXPECT_EQ(neighbors[0].mac, (std::array<std::uint8_t, 6>{2, 0, 0, 0, 1, 9}));

  // Nothing pending: nothing changed.
  neighbors.clear();
  EXPECT_FALSE(watch.drain(neighbors));
  EXPECT_TRUE(neighbors.empty());

  ns.ip({"route", "del", "10.4.0.0/16"});
  EXPECT_TRUE(watch.drain(neighbors));

  // Moved: the new owner reads, the old one holds nothing.
  RouteWatch moved = std::move(watch);
  EXPECT_EQ(watch.fd(), -1);
  ns.ip({"addr", "add", "10.8.3.1/24", "dev", "va"});
  EXPECT_TRUE(moved.drain(neighbors));
}

}  // namespace
}  // namespace rocehil::testbed::dataplane
