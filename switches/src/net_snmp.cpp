#include "net_snmp.hpp"

// clang-format off: net-snmp-config.h must come first.
#include <net-snmp/net-snmp-config.h>
#include <net-snmp/net-snmp-includes.h>
// clang-format on

#include <fmt/format.h>

#include <cstdlib>
#include <cstring>
#include <mutex>
#include <span>

namespace rocehil::switches::detail {

void init_net_snmp() {
  static std::once_flag once;
  std::call_once(once, [] {
    netsnmp_ds_set_boolean(NETSNMP_DS_LIBRARY_ID, NETSNMP_DS_LIB_DONT_READ_CONFIGS, 1);
    netsnmp_ds_set_boolean(NETSNMP_DS_LIBRARY_ID, NETSNMP_DS_LIB_DISABLE_PERSISTENT_LOAD, 1);
    netsnmp_ds_set_boolean(NETSNMP_DS_LIBRARY_ID, NETSNMP_DS_LIB_DISABLE_PERSISTENT_SAVE, 1);
    netsnmp_ds_set_boolean(NETSNMP_DS_LIBRARY_ID, NETSNMP_DS_LIB_DONT_PERSIST_STATE, 1);
    // No MIB modules: net-snmp reads the list from MIBS (its own tools' -m sets it the same way),
    // and Debian ships no MIB files to find. A user's own MIBS is left as it is. This runs once,
    // when the first session opens, before the caller starts threads of its own.
    setenv("MIBS", "", 0);
    // Whatever the library would log goes nowhere: with no handler it writes to stderr.
    snmp_disable_log();
    netsnmp_register_loghandler(NETSNMP_LOGHANDLER_NONE, LOG_DEBUG);
    init_snmp("rocehil");
  });
}

namespace {

struct Protocol {
  const char* name;
  const oid* id;
  std::size_t length;
};

const Protocol* find_protocol(const std::string& name, bool privacy) {
  static const Protocol auth[] = {
      {"md5", usmHMACMD5AuthProtocol, OID_LENGTH(usmHMACMD5AuthProtocol)},
      {"sha", usmHMACSHA1AuthProtocol, OID_LENGTH(usmHMACSHA1AuthProtocol)},
      {"sha224", usmHMAC128SHA224AuthProtocol, OID_LENGTH(usmHMAC128SHA224AuthProtocol)},
      {"sha256", usmHMAC192SHA256AuthProtocol, OID_LENGTH(usmHMAC192SHA256AuthProtocol)},
      {"sha384", usmHMAC256SHA384AuthProtocol, OID_LENGTH(usmHMAC256SHA384AuthProtocol)},
      {"sha512", usmHMAC384SHA512AuthProtocol, OID_LENGTH(usmHMAC384SHA512AuthProtocol)},
  };
  static const Protocol priv[] = {
      {"des", usmDESPrivProtocol, OID_LENGTH(usmDESPrivProtocol)},
      {"aes", usmAESPrivProtocol, OID_LENGTH(usmAESPrivProtocol)},
      {"aes192", usmAES192PrivProtocol, OID_LENGTH(usmAES192PrivProtocol)},
      {"aes256", usmAES256PrivProtocol, OID_LENGTH(usmAES256PrivProtocol)},
  };
  for (const auto& p : privacy ? std::span<const Protocol>(priv) : std::span<const Protocol>(auth))
    if (name == p.name) return &p;
  return nullptr;
}

std::string peer_name(const std::string& address, int port) {
  // A bare IPv6 address needs brackets before the port.
  if (address.find(':') != std::string::npos && address.front() != '[')
    return fmt::format("udp6:[{}]:{}", address, port);
  return fmt::format("udp:{}:{}", address, port);
}

std::string error_of(netsnmp_session* s) {
  int liberr = 0, syserr = 0;
  char* text = nullptr;
  snmp_error(s, &liberr, &syserr, &text);
  std::string out = text ? text : "unknown net-snmp error";
  std::free(text);
  return out;
}

}  // namespace

Session::Session(const std::string& address, const SnmpCredentials& c) {
  init_net_snmp();
  netsnmp_session s;
  snmp_sess_init(&s);
  std::string peer = peer_name(address, c.settings.port);
  s.peername = peer.data();
  s.timeout = static_cast<long>(c.settings.timeout_ms) * 1000L;
  s.retries = c.settings.retries;
  std::string community = c.community, user = c.settings.user;
  if (c.settings.version == inventory::SnmpSettings::Version::v2c) {
    s.version = SNMP_VERSION_2c;
    s.community = reinterpret_cast<u_char*>(community.data());
    s.community_len = community.size();
  } else {
    s.version = SNMP_VERSION_3;
    s.securityName = user.data();
    s.securityNameLen = user.size();
    s.securityLevel = SNMP_SEC_LEVEL_NOAUTH;
    if (const Protocol* a = find_protocol(c.settings.auth, false)) {
      s.securityLevel = SNMP_SEC_LEVEL_AUTHNOPRIV;
      s.securityAuthProto = const_cast<oid*>(a->id);
      s.securityAuthProtoLen = a->length;
      s.securityAuthKeyLen = USM_AUTH_KU_LEN;
      if (generate_Ku(a->id, static_cast<u_int>(a->length),
                      reinterpret_cast<const u_char*>(c.auth_key.data()), c.auth_key.size(),
                      s.securityAuthKey, &s.securityAuthKeyLen) != SNMPERR_SUCCESS) {
        error_ = "cannot derive the SNMPv3 authentication key from auth_key";
        return;
      }
      if (const Protocol* p = find_protocol(c.settings.priv, true)) {
        s.securityLevel = SNMP_SEC_LEVEL_AUTHPRIV;
        s.securityPrivProto = const_cast<oid*>(p->id);
        s.securityPrivProtoLen = p->length;
        s.securityPrivKeyLen = USM_PRIV_KU_LEN;
        // USM derives the privacy key with the authentication protocol's hash (RFC 3414 2.6).
        if (generate_Ku(a->id, static_cast<u_int>(a->length),
                        reinterpret_cast<const u_char*>(c.priv_key.data()), c.priv_key.size(),
                        s.securityPrivKey, &s.securityPrivKeyLen) != SNMPERR_SUCCESS) {
          error_ = "cannot derive the SNMPv3 privacy key from priv_key";
          return;
        }
      }
    }
  }
  handle_ = snmp_sess_open(&s);
  if (!handle_) error_ = error_of(&s);
}

Session::~Session() {
  if (handle_) snmp_sess_close(handle_);
}

std::string Session::last_error() const {
  if (!handle_) return error_;
  int liberr = 0, syserr = 0;
  char* text = nullptr;
  snmp_sess_error(handle_, &liberr, &syserr, &text);
  std::string out = text ? text : "unknown net-snmp error";
  std::free(text);
  return out;
}

Value value_of(const variable_list& v) {
  Value out;
  switch (v.type) {
    case ASN_INTEGER:
      out.type = Value::Type::integer;
      out.number = static_cast<std::uint64_t>(*v.val.integer);
      break;
    case ASN_COUNTER:
      out.type = Value::Type::counter32;
      out.number = static_cast<std::uint64_t>(*v.val.integer) & 0xffffffffULL;
      break;
    case ASN_GAUGE:
      out.type = Value::Type::gauge32;
      out.number = static_cast<std::uint64_t>(*v.val.integer) & 0xffffffffULL;
      break;
    case ASN_TIMETICKS:
      out.type = Value::Type::timeticks;
      out.number = static_cast<std::uint64_t>(*v.val.integer) & 0xffffffffULL;
      break;
    case ASN_COUNTER64:
      out.type = Value::Type::counter64;
      out.number = (static_cast<std::uint64_t>(v.val.counter64->high) << 32) |
                   (static_cast<std::uint64_t>(v.val.counter64->low) & 0xffffffffULL);
      break;
    case ASN_OCTET_STR:
      out.type = Value::Type::octets;
      out.text.assign(reinterpret_cast<const char*>(v.val.string), v.val_len);
      break;
    case ASN_OBJECT_ID: {
      out.type = Value::Type::object_id;
      Oid o;
      for (std::size_t i = 0; i < v.val_len / sizeof(oid); ++i)
        o.push_back(static_cast<std::uint32_t>(v.val.objid[i]));
      out.text = to_string(o);
      break;
    }
    case ASN_IPADDRESS:
      out.type = Value::Type::ip_address;
      if (v.val_len == 4)
        out.text = fmt::format("{}.{}.{}.{}", v.val.string[0], v.val.string[1], v.val.string[2],
                               v.val.string[3]);
      break;
    case ASN_NULL: out.type = Value::Type::null; break;
    default: out.type = Value::Type::other; break;
  }
  return out;
}

}  // namespace rocehil::switches::detail
