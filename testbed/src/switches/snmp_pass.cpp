#include "rocehil/testbed/snmp_pass.hpp"

#include <fmt/format.h>

#include <charconv>
#include <numeric>

namespace rocehil::testbed {

std::optional<Oid> parse_oid(std::string_view text) {
  if (text.starts_with('.')) text.remove_prefix(1);
  if (text.empty()) return std::nullopt;
  Oid out;
  while (true) {
    const auto dot = text.find('.');
    const std::string_view arc = text.substr(0, dot);
    std::uint32_t value = 0;
    const auto [end, ec] = std::from_chars(arc.data(), arc.data() + arc.size(), value);
    if (arc.empty() || ec != std::errc() || end != arc.data() + arc.size()) return std::nullopt;
    out.push_back(value);
    if (dot == std::string_view::npos) return out;
    text.remove_prefix(dot + 1);
  }
}

std::string format_oid(const Oid& oid) {
  std::string out;
  for (auto arc : oid) out += fmt::format(".{}", arc);
  return out;
}

std::string_view to_string(CounterMib mib) {
  return mib == CounterMib::pfc ? "pfc" : "qos";
}

std::optional<CounterMib> counter_mib_from(std::string_view name) {
  for (auto mib : {CounterMib::pfc, CounterMib::qos})
    if (to_string(mib) == name) return mib;
  return std::nullopt;
}

Oid mib_root(CounterMib mib) {
  if (mib == CounterMib::pfc) return {1, 3, 6, 1, 4, 1, 9, 9, 813};
  return {1, 3, 6, 1, 4, 1, 9, 9, 580, 1, 5, 5};
}

namespace {

Oid under(const Oid& root, std::initializer_list<std::uint32_t> arcs) {
  Oid out = root;
  out.insert(out.end(), arcs.begin(), arcs.end());
  return out;
}

std::uint64_t sum(const std::array<std::uint64_t, 8>& values) {
  return std::accumulate(values.begin(), values.end(), std::uint64_t{0});
}

}  // namespace

CounterTable counter_table(CounterMib mib, const std::vector<PortCounters>& ports) {
  CounterTable out;
  const Oid root = mib_root(mib);
  for (const auto& p : ports) {
    const auto ifindex = static_cast<std::uint32_t>(p.ifindex);
    if (mib == CounterMib::pfc) {
      // SONiC serves cpfcIfTable for priority 3 alone; the sum is what the MIB defines.
      out[under(root, {1, 1, 1, 1, ifindex})] = sum(p.pfc_sent);
      out[under(root, {1, 1, 1, 2, ifindex})] = sum(p.pfc_received);
      for (std::uint32_t prio = 0; prio < 8; ++prio) {
        out[under(root, {1, 2, 1, 2, ifindex, prio})] = p.pfc_sent[prio];
        out[under(root, {1, 2, 1, 3, ifindex, prio})] = p.pfc_received[prio];
      }
    } else {
      constexpr std::uint32_t egress = 2;
      for (std::uint32_t queue = 1; queue <= p.queues.size(); ++queue) {
        const QueueCounters& q = p.queues[queue - 1];
        out[under(root, {1, 4, ifindex, egress, queue, 1})] = q.packets;
        out[under(root, {1, 4, ifindex, egress, queue, 2})] = q.bytes;
        out[under(root, {1, 4, ifindex, egress, queue, 5})] = q.drops;
        if (q.drop_bytes) out[under(root, {1, 4, ifindex, egress, queue, 6})] = *q.drop_bytes;
      }
    }
  }
  return out;
}

PassPersist::PassPersist(CounterMib mib, Reader read, Now now, std::chrono::milliseconds max_age)
    : mib_(mib), read_(std::move(read)), now_(std::move(now)), max_age_(max_age) {}

const CounterTable& PassPersist::table(bool continues_walk) {
  // Long enough for any walk of these tables; short enough that a poll after a case never reads
  // one that began before it.
  constexpr auto walk_limit = std::chrono::seconds(10);
  const auto age = read_at_ ? now_() - *read_at_ : Clock::duration::max();
  if (!read_at_ || age > (continues_walk ? Clock::duration(walk_limit) : max_age_)) {
    // Counters that cannot be read are absent (NONE) until the next reading: snmpd keeps its
    // handler and the walk ends, rather than the handler dying mid-walk.
    try {
      table_ = counter_table(mib_, read_());
    } catch (const std::exception&) {
      table_.clear();
    }
    // The age counts from the reading's end. A reading takes several processes (nft in this
    // namespace and its peers', tc, ip): on a busy machine longer than max_age, and counted from
    // its start every getnext of a walk would read again, a walk of 72 rows taking a minute, and
    // every SNMP poll of the switch timing out.
    read_at_ = now_();
  }
  return table_;
}

std::string PassPersist::answer_get(const std::string& oid_text, bool next) {
  const auto oid = parse_oid(oid_text);
  if (!oid) return "NONE\n";
  // A getnext from a row of the current reading goes on with a walk that reading began: snmpd
  // asks from the row it was last given, for each column of a GETBULK in turn, so the rows of
  // this handler's columns interleave with each other's (and the other handler's) and only a
  // walk's first getnext names an OID that is not a row.
  const bool continues_walk = next && read_at_ && table_.count(*oid) > 0;
  const CounterTable& values = table(continues_walk);
  const auto it = next ? values.upper_bound(*oid) : values.find(*oid);
  if (it == values.end()) return "NONE\n";
  return fmt::format("{}\ncounter64\n{}\n", format_oid(it->first), it->second);
}

std::string PassPersist::feed(std::string_view line) {
  while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.remove_suffix(1);
  if (command_.empty()) {
    if (line == "PING") return "PONG\n";
    if (line == "get" || line == "getnext" || line == "set") {
      command_ = line;
      arguments_.clear();
      return {};
    }
    return "NONE\n";
  }
  arguments_.emplace_back(line);
  // set: the OID, then "type value"; get and getnext: the OID.
  if (command_ == "set" && arguments_.size() < 2) return {};
  const std::string command = std::move(command_);
  command_.clear();
  if (command == "set") return "not-writable\n";
  return answer_get(arguments_[0], command == "getnext");
}

}  // namespace rocehil::testbed
