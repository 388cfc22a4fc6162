#include "rocehil/switches/port_admin.hpp"

// clang-format off: net-snmp-config.h must come first.
#include <net-snmp/net-snmp-config.h>
#include <net-snmp/net-snmp-includes.h>
// clang-format on

#include <fmt/format.h>

#include <chrono>
#include <map>
#include <memory>
#include <thread>

#include "net_snmp.hpp"
#include "rocehil/common/error.hpp"
#include "rocehil/switches/poller.hpp"

namespace rocehil::switches {

std::string_view to_string(AdminStatus s) {
  return s == AdminStatus::up ? "up" : "down";
}

long admin_status_number(AdminStatus s) {
  return static_cast<long>(s);
}

std::optional<AdminStatus> admin_status_of(const Value& v) {
  if (v.type != Value::Type::integer) return std::nullopt;
  if (v.number == 1) return AdminStatus::up;
  if (v.number == 2) return AdminStatus::down;
  return std::nullopt;
}

namespace {

// The rows of one column, by ifIndex (rows whose index is not a single number are no ports).
std::map<std::uint32_t, std::string> column_by_index(const std::vector<Varbind>& rows,
                                                     const Oid& column) {
  std::map<std::uint32_t, std::string> out;
  for (const Varbind& v : rows) {
    if (!starts_with(v.oid, column) || v.value.type != Value::Type::octets) continue;
    const Oid index = index_after(v.oid, column);
    if (index.size() == 1) out.emplace(index[0], v.value.text);
  }
  return out;
}

}  // namespace

std::optional<std::uint32_t> if_index_of(const std::vector<Varbind>& rows,
                                         const std::string& port) {
  for (const Oid* column : {&mib::if_name, &mib::if_descr})
    for (const auto& [index, name] : column_by_index(rows, *column))
      if (name == port) return index;
  return std::nullopt;
}

std::vector<std::string> port_names(const std::vector<Varbind>& rows) {
  std::map<std::uint32_t, std::string> names = column_by_index(rows, mib::if_name);
  names.merge(column_by_index(rows, mib::if_descr));  // keeps the ifName where both are
  std::vector<std::string> out;
  for (auto& [index, name] : names) out.push_back(std::move(name));
  return out;
}

namespace {

using netsnmp_pdu_ptr = std::unique_ptr<netsnmp_pdu, decltype(&snmp_free_pdu)>;

// What every message of one SET names.
struct SetContext {
  std::string who;  // "switch 's1' port 'Ethernet0'"
  std::string address;
  const inventory::SnmpSettings& settings;
};

std::string port_list_text(const std::vector<std::string>& names) {
  constexpr std::size_t most = 12;
  std::string out;
  for (std::size_t i = 0; i < names.size() && i < most; ++i)
    out += (out.empty() ? "" : ", ") + names[i];
  if (names.size() > most) out += fmt::format(" and {} more", names.size() - most);
  return out.empty() ? "none" : out;
}

// The fix for an agent that refused the write: the credential lacks write access to the column.
std::string write_access_fix(const inventory::SnmpSettings& s) {
  if (s.version == inventory::SnmpSettings::Version::v2c)
    return "give a write community (write_community_file) the agent accepts for ifAdminStatus "
           "(net-snmp: rwcommunity COMMUNITY SOURCE .1.3.6.1.2.1.2.2.1.7)";
  return fmt::format(
      "give the SNMPv3 user '{}' write access to ifAdminStatus (net-snmp: a write view of "
      ".1.3.6.1.2.1.2.2.1.7 in its group's access line; docs/inventory.md, \"snmp\")",
      s.user);
}

// Sends `request` (always consumed) and waits for the answer; throws on none.
netsnmp_pdu_ptr exchange(const detail::Session& session, netsnmp_pdu* request, const SetContext& c,
                         std::string_view what) {
  netsnmp_pdu* response = nullptr;
  const int status = snmp_sess_synch_response(session.handle(), request, &response);
  netsnmp_pdu_ptr answer(response, &snmp_free_pdu);
  if (status == STAT_TIMEOUT) {
    const bool v2c = c.settings.version == inventory::SnmpSettings::Version::v2c;
    throw Error(
        ExitCode::infrastructure,
        fmt::format(
            "{}: no answer to {} from {} port {} within {} ms x {} tries ({})", c.who, what,
            c.address, c.settings.port, c.settings.timeout_ms, c.settings.retries + 1,
            v2c ? fmt::format("an SNMPv2c agent does not answer a community it does "
                              "not know: check the address, that the agent runs, and "
                              "the {}",
                              what.starts_with("SET") ? "write community (write_community_file)"
                                                      : "community")
                : std::string("check the address, that the agent runs, and the "
                              "SNMPv3 user")));
  }
  if (status != STAT_SUCCESS || !answer)
    throw Error(ExitCode::infrastructure, fmt::format("{}: {} to {} failed: {}", c.who, what,
                                                      c.address, session.last_error()));
  if (answer->command == SNMP_MSG_REPORT)
    throw Error(ExitCode::infrastructure,
                fmt::format("{}: {} refused {}: {} (check the SNMPv3 user, auth and priv "
                            "protocols and keys)",
                            c.who, c.address, what,
                            snmp_api_errstring(snmpv3_get_report_type(answer.get()))));
  return answer;
}

std::vector<oid> admin_status_oid(std::uint32_t if_index) {
  std::vector<oid> name(mib::if_admin_status.begin(), mib::if_admin_status.end());
  name.push_back(if_index);
  return name;
}

void set_admin_status(const detail::Session& session, std::uint32_t if_index, AdminStatus wanted,
                      const SetContext& c) {
  netsnmp_pdu* pdu = snmp_pdu_create(SNMP_MSG_SET);
  const std::vector<oid> name = admin_status_oid(if_index);
  const long value = admin_status_number(wanted);
  snmp_pdu_add_variable(pdu, name.data(), name.size(), ASN_INTEGER, &value, sizeof(value));
  const std::string what =
      fmt::format("SET ifAdminStatus.{} = {} ({})", if_index, value, to_string(wanted));
  const netsnmp_pdu_ptr answer = exchange(session, pdu, c, what);
  const long status = answer->errstat;
  if (status == SNMP_ERR_NOERROR) return;
  const std::string why = snmp_errstring(static_cast<int>(status));
  switch (status) {
    case SNMP_ERR_NOACCESS:
    case SNMP_ERR_NOTWRITABLE:
    case SNMP_ERR_READONLY:
    case SNMP_ERR_AUTHORIZATIONERROR:
      throw input_error(fmt::format("{}: {} refused {}: {}; {}", c.who, c.address, what, why,
                                    write_access_fix(c.settings)));
    default:
      throw Error(ExitCode::infrastructure,
                  fmt::format("{}: {} could not apply {}: {} (the switch's log may say why; "
                              "'rocehil switches poll' shows whether it serves the port)",
                              c.who, c.address, what, why));
  }
}

std::optional<AdminStatus> get_admin_status(const detail::Session& session, std::uint32_t if_index,
                                            const SetContext& c, Value& read) {
  const std::string what = fmt::format("GET ifAdminStatus.{}", if_index);
  netsnmp_pdu* pdu = snmp_pdu_create(SNMP_MSG_GET);
  const std::vector<oid> name = admin_status_oid(if_index);
  snmp_add_null_var(pdu, name.data(), name.size());
  const netsnmp_pdu_ptr answer = exchange(session, pdu, c, what);
  if (answer->errstat != SNMP_ERR_NOERROR || !answer->variables)
    throw Error(ExitCode::infrastructure,
                fmt::format("{}: {} answered {} with '{}'", c.who, c.address, what,
                            snmp_errstring(static_cast<int>(answer->errstat))));
  read = detail::value_of(*answer->variables);
  return admin_status_of(read);
}

std::string shown_value(const Value& v) {
  if (v.type != Value::Type::integer) return "a value that is no INTEGER";
  if (const auto s = admin_status_of(v)) return std::string(to_string(*s));
  return v.number == 3 ? "testing(3)" : fmt::format("{}", static_cast<long>(v.number));
}

}  // namespace

PortAdminResult set_port_admin_status(const inventory::Switch& s, const std::string& port,
                                      AdminStatus wanted, const EnvLookup& env) {
  if (!s.snmp)
    throw input_error(
        fmt::format("switch '{}' has no snmp settings; add snmp: with a write credential "
                    "(write_community_file for 2c, writable: true for 3) to it or to defaults "
                    "(docs/inventory.md)",
                    s.name));
  // The write secret first: a missing one stops before anything is sent.
  const SnmpCredentials writer = read_write_credentials(s.name, *s.snmp, env);
  const SnmpCredentials reader = read_credentials(s.name, *s.snmp, env);
  const std::string address = s.address.empty() ? s.name : s.address;
  const SetContext c{fmt::format("switch '{}' port '{}'", s.name, port), address, *s.snmp};

  // The ifIndex, from the same columns a poll names ports by.
  WalkResult walked;
  {
    Poller poller({Target{s.name, address, reader}});
    walked = std::move(poller.walk({mib::if_name, mib::if_descr}).front());
  }
  if (!walked.error.empty())
    throw Error(
        ExitCode::infrastructure,
        fmt::format("{}: cannot read its ports (ifName, ifDescr): {}", c.who, walked.error));
  const std::optional<std::uint32_t> if_index = if_index_of(walked.rows, port);
  if (!if_index)
    throw input_error(fmt::format(
        "switch '{}' has no port '{}' (no ifName or ifDescr of its agent at {} is '{}'); its "
        "ports: {}",
        s.name, port, address, port, port_list_text(port_names(walked.rows))));

  detail::Session write_session(address, writer);
  if (!write_session.handle())
    throw Error(ExitCode::infrastructure, fmt::format("{}: cannot open an SNMP session to {}: {}",
                                                      c.who, address, write_session.error()));
  set_admin_status(write_session, *if_index, wanted, c);

  // Read back with the read credentials, as a poll sees it. An agent may apply the SET a moment
  // after it answers (a switch's config daemon): read for up to 2 s.
  detail::Session read_session(address, reader);
  if (!read_session.handle())
    throw Error(ExitCode::infrastructure, fmt::format("{}: cannot open an SNMP session to {}: {}",
                                                      c.who, address, read_session.error()));
  Value read;
  for (int attempt = 0;; ++attempt) {
    if (get_admin_status(read_session, *if_index, c, read) == wanted) break;
    if (attempt == 10)
      throw Error(ExitCode::infrastructure,
                  fmt::format("{}: {} accepted SET ifAdminStatus.{} = {} ({}), but it still "
                              "reads {} 2 s later; the agent did not apply it",
                              c.who, address, *if_index, admin_status_number(wanted),
                              to_string(wanted), shown_value(read)));
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  return {s.name, port, *if_index, wanted};
}

}  // namespace rocehil::switches
