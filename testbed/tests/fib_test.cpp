#include "dataplane/fib.hpp"

#include <arpa/inet.h>
#include <gtest/gtest.h>

#include <map>
#include <random>
#include <string>
#include <vector>

namespace rocehil::testbed::dataplane {
namespace {

std::uint32_t fib_ipv4(const char* text) {
  in_addr a{};
  EXPECT_EQ(::inet_pton(AF_INET, text, &a), 1) << text;
  return ntohl(a.s_addr);
}

// Each route's first hop's ifindex names it, so a test sees which route a lookup found.
Route fib_route(const char* prefix, int length, int id, RouteKind kind = RouteKind::unicast) {
  Route r;
  r.prefix = fib_ipv4(prefix);
  r.length = length;
  r.kind = kind;
  if (kind != RouteKind::unreachable) r.hops.push_back({id, 0});
  return r;
}

int fib_found(const Fib& fib, const char* destination) {
  const Route* r = fib.lookup(fib_ipv4(destination));
  if (r == nullptr) return -1;
  return r->hops.empty() ? 0 : r->hops.front().ifindex;
}

TEST(Fib, LongestPrefixHoldingTheDestinationWins) {
  const Fib fib(
      {fib_route("10.0.0.0", 8, 1), fib_route("10.1.2.0", 24, 3), fib_route("10.1.0.0", 16, 2)});
  EXPECT_EQ(fib_found(fib, "10.1.2.3"), 3);
  EXPECT_EQ(fib_found(fib, "10.1.3.3"), 2);
  EXPECT_EQ(fib_found(fib, "10.2.0.1"), 1);
  EXPECT_EQ(fib_found(fib, "10.255.255.255"), 1);
}

TEST(Fib, NoRouteIsNull) {
  const Fib fib({fib_route("10.0.0.0", 8, 1)});
  EXPECT_EQ(fib.lookup(fib_ipv4("11.0.0.1")), nullptr);
  EXPECT_EQ(fib.lookup(fib_ipv4("9.255.255.255")), nullptr);
  EXPECT_EQ(Fib().lookup(0), nullptr);
  EXPECT_FALSE(Fib().is_local(0));
}

TEST(Fib, DefaultRouteHoldsEverythingElse) {
  const Fib fib({fib_route("0.0.0.0", 0, 9), fib_route("10.0.0.0", 8, 1)});
  EXPECT_EQ(fib_found(fib, "10.0.0.1"), 1);
  EXPECT_EQ(fib_found(fib, "0.0.0.0"), 9);
  EXPECT_EQ(fib_found(fib, "192.168.1.1"), 9);
  EXPECT_EQ(fib_found(fib, "255.255.255.255"), 9);
}

TEST(Fib, HostRouteHoldsOnlyItsAddress) {
  const Fib fib({fib_route("10.1.2.0", 24, 1), fib_route("10.1.2.7", 32, 2)});
  EXPECT_EQ(fib_found(fib, "10.1.2.7"), 2);
  EXPECT_EQ(fib_found(fib, "10.1.2.6"), 1);
  EXPECT_EQ(fib_found(fib, "10.1.2.8"), 1);
}

TEST(Fib, HostBitsOfAPrefixAreCleared) {
  const Fib fib({fib_route("10.1.2.3", 16, 1)});
  EXPECT_EQ(fib_found(fib, "10.1.200.9"), 1);
  EXPECT_EQ(fib.routes().front().prefix, fib_ipv4("10.1.0.0"));
}

TEST(Fib, LocalWinsOverUnicastOfTheSameLengthWhicheverComesFirst) {
  for (const bool local_first : {true, false}) {
    std::vector<Route> routes = {fib_route("10.0.0.1", 32, 1),
                                 fib_route("10.0.0.1", 32, 2, RouteKind::local)};
    if (local_first) std::swap(routes[0], routes[1]);
    const Fib fib(routes);
    EXPECT_EQ(fib_found(fib, "10.0.0.1"), 2);
    EXPECT_TRUE(fib.is_local(fib_ipv4("10.0.0.1")));
    EXPECT_FALSE(fib.is_local(fib_ipv4("10.0.0.2")));
  }
}

TEST(Fib, LocalTableIsLookedInFirstAsTheKernelDoes) {
  // 127.0.0.0/8 is local even where main holds a longer prefix inside it.
  const Fib fib({fib_route("127.1.0.0", 16, 1), fib_route("127.0.0.0", 8, 2, RouteKind::local),
                 fib_route("10.0.0.255", 32, 3, RouteKind::local)});
  EXPECT_EQ(fib_found(fib, "127.1.0.5"), 2);
  EXPECT_TRUE(fib.is_local(fib_ipv4("127.0.0.1")));
  EXPECT_TRUE(fib.is_local(fib_ipv4("10.0.0.255")));
  EXPECT_FALSE(fib.is_local(fib_ipv4("10.0.0.254")));
}

TEST(Fib, UnreachableRouteIsFoundAndALongerUnicastStillWins) {
  const Fib fib({fib_route("10.7.0.0", 16, 0, RouteKind::unreachable), fib_route("10.7.1.0", 24, 4),
                 fib_route("0.0.0.0", 0, 9)});
  const Route* r = fib.lookup(fib_ipv4("10.7.2.1"));
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(r->kind, RouteKind::unreachable);
  EXPECT_TRUE(r->hops.empty());
  EXPECT_EQ(fib_found(fib, "10.7.1.1"), 4);
  EXPECT_FALSE(fib.is_local(fib_ipv4("10.7.2.1")));
}

TEST(Fib, OfEqualRoutesTheFirstGivenWins) {
  // A dump lists the lowest metric first.
  const Fib fib({fib_route("10.0.0.0", 8, 1), fib_route("10.0.0.0", 8, 2)});
  EXPECT_EQ(fib_found(fib, "10.3.3.3"), 1);
}

// The reference: every route holding the destination, local ones before the rest, the longest,
// the first given of equals. A plain scan shares nothing with Fib's sorted groups.
int fib_reference(const std::vector<Route>& routes, std::uint32_t destination) {
  int best = -1;
  int best_length = -1;
  bool best_local = false;
  for (const Route& r : routes) {
    const std::uint32_t mask = r.length == 0 ? 0 : ~std::uint32_t{0} << (32 - r.length);
    if ((destination & mask) != (r.prefix & mask)) continue;
    const bool local = r.kind == RouteKind::local;
    if (best == -1 || (local && !best_local) || (local == best_local && r.length > best_length)) {
      best = r.hops.front().ifindex;
      best_length = r.length;
      best_local = local;
    }
  }
  return best;
}

TEST(Fib, AgreesWithAScanOverEveryRouteOnRandomTables) {
  std::mt19937 random(63);
  for (int table = 0; table < 20; ++table) {
    std::vector<Route> routes;
    std::vector<std::uint32_t> near;
    // Few distinct prefixes in a small space, so lengths nest and collide.
    for (int i = 0; i < 300; ++i) {
      Route r;
      r.length = static_cast<int>(random() % 33);
      r.prefix = (random() % 64) << 26 | (random() % 16) << 8 | (random() % 4);
      if (r.length < 32) r.prefix &= r.length == 0 ? 0 : ~std::uint32_t{0} << (32 - r.length);
      r.kind = random() % 10 == 0 ? RouteKind::local : RouteKind::unicast;
      r.hops.push_back({i + 1, 0});
      near.push_back(r.prefix);
      routes.push_back(r);
    }
    const Fib fib(routes);
    for (int i = 0; i < 2000; ++i) {
      const std::uint32_t destination =
          i % 2 == 0 ? static_cast<std::uint32_t>(random())
                     : near[random() % near.size()] ^ static_cast<std::uint32_t>(random() % 512);
      const Route* r = fib.lookup(destination);
      const int expected = fib_reference(routes, destination);
      ASSERT_EQ(r == nullptr ? -1 : r->hops.front().ifindex, expected) << destination;
    }
  }
}

TEST(Fib, EcmpSpreadsFlowsOverEveryHopEvenlyAndKeepsAFlowOnOne) {
  Route r = fib_route("10.9.0.0", 16, 1);
  r.hops = {{1, 11}, {2, 12}, {3, 13}, {4, 14}};
  std::map<int, int> flows;
  for (std::uint32_t hash = 0; hash < 4000; ++hash) ++flows[pick_next_hop(r, hash).ifindex];
  EXPECT_EQ(flows, (std::map<int, int>{{1, 1000}, {2, 1000}, {3, 1000}, {4, 1000}}));
  for (const std::uint32_t hash : {0u, 7u, 0xdeadbeefu, 0xffffffffu})
    EXPECT_EQ(&pick_next_hop(r, hash), &pick_next_hop(r, hash));
  EXPECT_EQ(pick_next_hop(r, 6).gateway, 13u);
}

TEST(Fib, RouteWithoutHopsPicksNowhere) {
  const Route blackhole = fib_route("10.7.0.0", 16, 0, RouteKind::unreachable);
  EXPECT_EQ(pick_next_hop(blackhole, 12345).ifindex, 0);
}

}  // namespace
}  // namespace rocehil::testbed::dataplane
