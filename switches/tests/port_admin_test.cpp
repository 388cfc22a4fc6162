// The pure parts of a port's SET: which ifIndex a port name is, and ifAdminStatus's numbers.
// The SET itself runs against real snmpd in tests/system/snmp_port_test.py.
#include "rocehil/switches/port_admin.hpp"

#include <gtest/gtest.h>

#include "rocehil/common/error.hpp"
#include "rows.hpp"

namespace rocehil::switches {
namespace {

using test::integer;
using test::text;

TEST(PortAdmin, IfAdminStatusIsOneForUpAndTwoForDown) {
  EXPECT_EQ(admin_status_number(AdminStatus::up), 1);
  EXPECT_EQ(admin_status_number(AdminStatus::down), 2);
  EXPECT_EQ(to_string(AdminStatus::up), "up");
  EXPECT_EQ(to_string(AdminStatus::down), "down");
  const auto read = [](Value::Type type, std::uint64_t n) {
    return admin_status_of(Value{type, n, {}});
  };
  EXPECT_EQ(read(Value::Type::integer, 1), AdminStatus::up);
  EXPECT_EQ(read(Value::Type::integer, 2), AdminStatus::down);
  EXPECT_EQ(read(Value::Type::integer, 3), std::nullopt);  // testing
  EXPECT_EQ(read(Value::Type::integer, 0), std::nullopt);
  EXPECT_EQ(read(Value::Type::gauge32, 1), std::nullopt);  // not an INTEGER: not read as one
}

TEST(PortAdmin, APortIsFoundByIfNameFirstThenByIfDescr) {
  // SONiC: ifName is the port (Ethernet0), ifDescr the same or a description.
  const std::vector<Varbind> rows = {
      text(mib::if_name, {1}, "lo"),
      text(mib::if_name, {5}, "Ethernet0"),
      text(mib::if_name, {9}, "Ethernet4"),
      text(mib::if_descr, {1}, "lo"),
      text(mib::if_descr, {5}, "Ethernet4"),  // an ifDescr that is another port's ifName
      text(mib::if_descr, {9}, "Ethernet4"),
      text(mib::if_descr, {12}, "mgmt0"),  // only in ifTable: no ifName row
  };
  EXPECT_EQ(if_index_of(rows, "Ethernet0"), 5u);
  EXPECT_EQ(if_index_of(rows, "Ethernet4"), 9u);  // ifName wins over ifDescr
  EXPECT_EQ(if_index_of(rows, "mgmt0"), 12u);
  EXPECT_EQ(if_index_of(rows, "ethernet0"), std::nullopt);  // exact: names are case-sensitive
  EXPECT_EQ(if_index_of(rows, "Ethernet"), std::nullopt);
  EXPECT_EQ(port_names(rows), (std::vector<std::string>{"lo", "Ethernet0", "Ethernet4", "mgmt0"}));
}

TEST(PortAdmin, RowsOfOtherColumnsOrWithoutAPortIndexNameNoPort) {
  const std::vector<Varbind> rows = {
      integer(mib::if_name, {3}, 7),             // an ifName that is no string
      text(mib::if_name, {4, 1}, "swp1"),        // an index of two numbers is no ifIndex
      text(mib::if_alias, {6}, "swp1"),          // ifAlias is a description, never the name
      text(mib::lldp_loc_port_id, {7}, "swp1"),  // another table altogether
  };
  EXPECT_EQ(if_index_of(rows, "swp1"), std::nullopt);
  EXPECT_TRUE(port_names(rows).empty());
}

TEST(PortAdmin, ASwitchWithoutAWriteCredentialIsRefusedBeforeAnythingIsSent) {
  inventory::Switch s;
  s.name = "l1";
  s.address = "192.0.2.1";  // TEST-NET: nothing answers there, and nothing may be asked
  try {
    set_port_admin_status(s, "Ethernet0", AdminStatus::down);
    FAIL() << "no snmp settings, yet no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.exit_code(), ExitCode::bad_input);
    EXPECT_NE(std::string(e.what()).find("switch 'l1' has no snmp settings"), std::string::npos)
        << e.what();
  }
  s.snmp = inventory::SnmpSettings{};
  s.snmp->community_env = "ROCEHIL_TEST_READ";
  try {
    set_port_admin_status(s, "Ethernet0", AdminStatus::down,
                          [](const std::string&) { return std::optional<std::string>("c"); });
    FAIL() << "no write credential, yet no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.exit_code(), ExitCode::bad_input);
    EXPECT_NE(std::string(e.what()).find("give no write credential"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace rocehil::switches
