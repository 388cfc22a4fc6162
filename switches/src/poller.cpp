#include "rocehil/switches/poller.hpp"

// clang-format off: net-snmp-config.h must come first.
#include <net-snmp/library/large_fd_set.h>
#include <net-snmp/net-snmp-config.h>
#include <net-snmp/net-snmp-includes.h>
// clang-format on

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>

#include "net_snmp.hpp"

namespace rocehil::switches {

namespace {

using Clock = std::chrono::steady_clock;

std::int64_t unix_now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// One switch's walk of several columns at once: GETBULK requests carrying the next OID of every
// column still open, until each column's rows leave its subtree.
struct Walk {
  const Target* target = nullptr;
  detail::Session* session = nullptr;
  const std::vector<Oid>* columns = nullptr;
  std::vector<Oid> cursor;  // per column: the last OID returned (the column itself at first)
  std::vector<bool> done;
  int repetitions = 25;
  WalkResult result;
  Clock::time_point started;
  bool active = false;

  std::vector<std::size_t> open_columns() const {
    std::vector<std::size_t> open;
    for (std::size_t i = 0; i < done.size(); ++i)
      if (!done[i]) open.push_back(i);
    return open;
  }

  void finish(std::string error = {}) {
    active = false;
    result.error = std::move(error);
    result.seconds = std::chrono::duration<double>(Clock::now() - started).count();
    if (!result.error.empty()) result.rows.clear();
  }

  void send();
  void receive(int operation, netsnmp_pdu* pdu);
};

int on_response(int operation, netsnmp_session*, int, netsnmp_pdu* pdu, void* magic) {
  static_cast<Walk*>(magic)->receive(operation, pdu);
  return 1;
}

void Walk::send() {
  const auto open = open_columns();
  if (open.empty()) {
    finish();
    return;
  }
  netsnmp_pdu* pdu = snmp_pdu_create(SNMP_MSG_GETBULK);
  pdu->non_repeaters = 0;
  // Ask for up to 500 rows however many columns are open: an agent sends what fits its message
  // size (net-snmp's: ~60 rows of counters), and every request saved is an agent's table read.
  pdu->max_repetitions =
      std::max(1L, std::min<long>(repetitions, 500 / static_cast<long>(open.size())));
  for (const std::size_t c : open) {
    std::vector<oid> name(cursor[c].begin(), cursor[c].end());
    snmp_add_null_var(pdu, name.data(), name.size());
  }
  ++result.requests;
  if (!snmp_sess_async_send(session->handle(), pdu, on_response, this)) {
    snmp_free_pdu(pdu);
    finish(fmt::format("cannot send to {}: {}", target->address, session->last_error()));
  }
}

void Walk::receive(int operation, netsnmp_pdu* pdu) {
  // net-snmp tells of each retry before it is sent; the walk goes on waiting.
  if (!active || operation == NETSNMP_CALLBACK_OP_RESEND) return;
  const auto& s = target->credentials.settings;
  if (operation == NETSNMP_CALLBACK_OP_TIMED_OUT) {
    finish(fmt::format(
        "no answer from {} port {} within {} ms x {} tries ({}; check the address, that the "
        "agent runs, and the {})",
        target->address, s.port, s.timeout_ms, s.retries + 1,
        s.version == inventory::SnmpSettings::Version::v2c
            ? "a wrong community is not answered at all"
            : "SNMPv3",
        s.version == inventory::SnmpSettings::Version::v2c ? "community" : "user and keys"));
    return;
  }
  if (operation == NETSNMP_CALLBACK_OP_SEC_ERROR) {
    // The agent's report says which check failed (wrong digest, unknown user, decryption).
    const std::string why = pdu ? snmp_api_errstring(snmpv3_get_report_type(pdu))
                                : "its answer failed the security checks";
    finish(
        fmt::format("{} refused the request: {} (check the SNMPv3 user, auth and priv "
                    "protocols and keys)",
                    target->address, why));
    return;
  }
  if (operation != NETSNMP_CALLBACK_OP_RECEIVED_MESSAGE || !pdu) {
    finish(fmt::format("the session to {} failed (net-snmp operation {}): {}", target->address,
                       operation, session->last_error()));
    return;
  }
  if (pdu->command == SNMP_MSG_REPORT) {
    const int code = snmpv3_get_report_type(pdu);
    finish(
        fmt::format("{} refused the request: {} (check the SNMPv3 user, auth and priv "
                    "protocols and keys)",
                    target->address, snmp_api_errstring(code)));
    return;
  }
  if (pdu->errstat == SNMP_ERR_TOOBIG && repetitions > 1) {
    repetitions = std::max(1, repetitions / 2);
    send();
    return;
  }
  if (pdu->errstat != SNMP_ERR_NOERROR) {
    finish(fmt::format("{} answered with error '{}' at varbind {}", target->address,
                       snmp_errstring(static_cast<int>(pdu->errstat)), pdu->errindex));
    return;
  }
  const auto open = open_columns();
  std::size_t i = 0;
  bool progressed = false;
  for (netsnmp_variable_list* v = pdu->variables; v; v = v->next_variable, ++i) {
    const std::size_t c = open[i % open.size()];
    if (done[c]) continue;
    if (v->type == SNMP_ENDOFMIBVIEW || v->type == SNMP_NOSUCHOBJECT ||
        v->type == SNMP_NOSUCHINSTANCE) {
      done[c] = true;
      continue;
    }
    Oid name(v->name, v->name + v->name_length);
    if (!starts_with(name, (*columns)[c])) {
      done[c] = true;
      continue;
    }
    // An agent must answer GETNEXT with a later OID; one that does not would walk forever.
    if (!(cursor[c] < name)) {
      finish(
          fmt::format("{} returned {} after {}: OIDs out of order (an agent bug); the walk "
                      "stops",
                      target->address, to_string(name), to_string(cursor[c])));
      return;
    }
    cursor[c] = name;
    result.rows.push_back({std::move(name), detail::value_of(*v)});
    progressed = true;
  }
  // A response with no varbinds at all would never end a column.
  if (!progressed && i == 0) {
    finish(fmt::format("{} answered a GETBULK with no values", target->address));
    return;
  }
  send();
}

}  // namespace

struct Poller::Sessions {
  std::vector<std::unique_ptr<detail::Session>> open;  // parallel to targets_; null: not opened
};

std::vector<Target> targets_of(const inventory::Inventory& inventory, const EnvLookup& env) {
  std::vector<Target> targets;
  for (const auto& s : inventory.switches) {
    if (!s.snmp) continue;
    targets.push_back(
        {s.name, s.address.empty() ? s.name : s.address, read_credentials(s.name, *s.snmp, env)});
  }
  return targets;
}

Poller::Poller(std::vector<Target> targets, PollerOptions options)
    : targets_(std::move(targets)), options_(options), sessions_(std::make_unique<Sessions>()) {
  detail::init_net_snmp();
  sessions_->open.resize(targets_.size());
}

Poller::~Poller() = default;

std::vector<WalkResult> Poller::walk(const std::vector<Oid>& columns,
                                     const std::vector<std::string>& only) {
  std::vector<std::size_t> chosen;
  for (std::size_t i = 0; i < targets_.size(); ++i)
    if (only.empty() || std::find(only.begin(), only.end(), targets_[i].name) != only.end())
      chosen.push_back(i);
  std::vector<Walk> walks(chosen.size());
  const auto deadline = Clock::now() + std::chrono::milliseconds(options_.deadline_ms);
  for (std::size_t k = 0; k < chosen.size(); ++k) {
    const std::size_t i = chosen[k];
    Walk& w = walks[k];
    w.target = &targets_[i];
    w.columns = &columns;
    w.cursor = columns;
    w.done.assign(columns.size(), false);
    w.repetitions = options_.bulk_rows;
    w.result.switch_name = targets_[i].name;
    w.started = Clock::now();
    auto& session = sessions_->open[i];
    // A session that failed to open is tried again at the next walk: the switch may be back.
    if (!session || !session->handle())
      session = std::make_unique<detail::Session>(targets_[i].address, targets_[i].credentials);
    if (!session->handle()) {
      w.result.error = fmt::format("cannot open an SNMP session to {}: {}", targets_[i].address,
                                   session->error());
      continue;
    }
    w.session = session.get();
    w.active = true;
    w.send();
  }
  while (std::any_of(walks.begin(), walks.end(), [](const Walk& w) { return w.active; })) {
    const auto now = Clock::now();
    if (now >= deadline) {
      for (auto& w : walks)
        if (w.active)
          w.finish(
              fmt::format("{} did not finish answering within {} ms (the poll's deadline); "
                          "it may be overloaded",
                          w.target->address, options_.deadline_ms));
      // Their requests are still outstanding in the sessions: start those afresh next time.
      for (std::size_t k = 0; k < walks.size(); ++k)
        if (!walks[k].result.error.empty() && walks[k].session) sessions_->open[chosen[k]].reset();
      break;
    }
    netsnmp_large_fd_set fds;
    netsnmp_large_fd_set_init(&fds, FD_SETSIZE);
    int max_fd = 0, block = 0;
    const auto left = std::chrono::duration_cast<std::chrono::microseconds>(deadline - now);
    timeval tv{static_cast<time_t>(left.count() / 1000000),
               static_cast<suseconds_t>(left.count() % 1000000)};
    for (auto& w : walks)
      if (w.active) snmp_sess_select_info2(w.session->handle(), &max_fd, &fds, &tv, &block);
    const int n = netsnmp_large_fd_set_select(max_fd, &fds, nullptr, nullptr, &tv);
    if (n > 0) {
      for (auto& w : walks)
        if (w.active) snmp_sess_read2(w.session->handle(), &fds);
    } else if (n == 0) {
      for (auto& w : walks)
        if (w.active) snmp_sess_timeout(w.session->handle());
    } else if (errno != EINTR) {
      const std::string why = std::strerror(errno);
      for (auto& w : walks)
        if (w.active) w.finish("select failed: " + why);
    }
    netsnmp_large_fd_set_cleanup(&fds);
  }
  std::vector<WalkResult> results;
  for (auto& w : walks) results.push_back(std::move(w.result));
  return results;
}

std::vector<SwitchSnapshot> Poller::counters(const std::vector<std::string>& only,
                                             const std::vector<Oid>& columns) {
  std::vector<SwitchSnapshot> out;
  for (auto& r : walk(columns, only)) {
    SwitchSnapshot s;
    if (r.error.empty()) {
      s = build_snapshot(r.switch_name, r.rows);
      if (s.ports.empty()) s.error = "the agent answered but serves no IF-MIB ifTable rows";
    } else {
      s.switch_name = r.switch_name;
      s.error = r.error;
    }
    s.unix_ns = unix_now_ns();
    s.poll_seconds = r.seconds;
    out.push_back(std::move(s));
  }
  return out;
}

std::vector<LldpView> Poller::lldp() {
  std::vector<LldpView> out;
  for (auto& r : walk(lldp_columns())) {
    if (!r.error.empty()) {
      out.push_back({r.switch_name, r.error, {}});
      continue;
    }
    const bool served = std::any_of(r.rows.begin(), r.rows.end(), [](const Varbind& v) {
      return starts_with(v.oid, {1, 0, 8802, 1, 1, 2});
    });
    if (!served) {
      out.push_back({r.switch_name,
                     "the agent serves no LLDP-MIB (is LLDP enabled on the switch, and exported "
                     "to its SNMP agent?)",
                     {}});
      continue;
    }
    out.push_back(build_lldp_view(r.switch_name, r.rows));
  }
  return out;
}

}  // namespace rocehil::switches
