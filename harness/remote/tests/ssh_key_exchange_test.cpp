#include "rocehil/remote/ssh_key_exchange.hpp"

#include <gtest/gtest.h>

#include <algorithm>

#include "rocehil/inventory/inventory.hpp"
#include "rocehil/remote/host_ssh.hpp"
#include "rocehil/remote/run_command.hpp"

namespace rocehil::remote {
namespace {

// `ssh -G x | grep kexalgorithms` on Debian 12 (OpenSSH 9.2p1 Debian-2+deb12u10), unconfigured.
constexpr const char* debian12 =
    "sntrup761x25519-sha512,sntrup761x25519-sha512@openssh.com,curve25519-sha256,"
    "curve25519-sha256@libssh.org,ecdh-sha2-nistp256,ecdh-sha2-nistp384,ecdh-sha2-nistp521,"
    "diffie-hellman-group-exchange-sha256,diffie-hellman-group16-sha512,"
    "diffie-hellman-group18-sha512,diffie-hellman-group14-sha256";

TEST(SshKeyExchange, OpenSsh92DefaultsGetCurve25519FirstAndKeepEveryOther) {
  EXPECT_EQ(cheap_key_exchange_first(debian12),
            "curve25519-sha256,curve25519-sha256@libssh.org,sntrup761x25519-sha512,"
            "sntrup761x25519-sha512@openssh.com,ecdh-sha2-nistp256,ecdh-sha2-nistp384,"
            "ecdh-sha2-nistp521,diffie-hellman-group-exchange-sha256,"
            "diffie-hellman-group16-sha512,diffie-hellman-group18-sha512,"
            "diffie-hellman-group14-sha256");
}

TEST(SshKeyExchange, PostQuantumMlkemComesBeforeCurve25519WhenConfigured) {
  EXPECT_EQ(cheap_key_exchange_first("sntrup761x25519-sha512@openssh.com,curve25519-sha256,"
                                     "mlkem768x25519-sha256"),
            "mlkem768x25519-sha256,curve25519-sha256,sntrup761x25519-sha512@openssh.com");
}

TEST(SshKeyExchange, NothingChangesWhenACheapOneLeadsOrNoneIsAllowed) {
  // OpenSSH 9.9's own default order already starts with mlkem768x25519.
  EXPECT_EQ(cheap_key_exchange_first("mlkem768x25519-sha256,sntrup761x25519-sha512,"
                                     "curve25519-sha256"),
            "");
  EXPECT_EQ(cheap_key_exchange_first("curve25519-sha256,sntrup761x25519-sha512"), "");
  // A site that allows only the post-quantum sntrup keeps it: nothing is added.
  EXPECT_EQ(cheap_key_exchange_first("sntrup761x25519-sha512@openssh.com"), "");
  EXPECT_EQ(cheap_key_exchange_first(""), "");
  EXPECT_EQ(cheap_key_exchange_first(",,"), "");
}

TEST(SshKeyExchange, TheOptionIsOneThisMachinesSshAccepts) {
  const std::string& option = ssh_key_exchange_option();
  if (option.empty()) GTEST_SKIP() << "this machine's ssh already prefers a cheap key exchange";
  ASSERT_EQ(option.rfind("KexAlgorithms=", 0), 0u) << option;
  // ssh -G validates every algorithm name and prints the list it would offer.
  const CommandResult shown =
      run_command({"ssh", "-G", "-o", option, "rocehil-key-exchange.invalid"}, RunOptions{});
  ASSERT_TRUE(shown.succeeded()) << shown.reason();
  EXPECT_NE(shown.out.find("\nkexalgorithms " + option.substr(14) + "\n"), std::string::npos)
      << shown.out;
}

inventory::Host ssh_host(std::vector<std::string> options) {
  inventory::Host h;
  h.name = "h1";
  h.address = "10.0.0.1";
  h.ssh.options = std::move(options);
  return h;
}

TEST(SshKeyExchange, HostCommandsCarryItAfterTheInventorysOptionsUnlessTheySetTheirOwn) {
  const std::string& option = ssh_key_exchange_option();
  if (option.empty()) GTEST_SKIP() << "this machine's ssh already prefers a cheap key exchange";
  const std::vector<std::string> argv =
      host_command(ssh_host({"IdentitiesOnly=yes"}), {"true"}).argv;
  const auto ours = std::find(argv.begin(), argv.end(), option);
  const auto inventorys = std::find(argv.begin(), argv.end(), "IdentitiesOnly=yes");
  ASSERT_NE(ours, argv.end());
  EXPECT_LT(inventorys, ours);  // ssh keeps the first value it reads
  EXPECT_EQ(*(ours - 1), "-o");
  for (const char* own :
       {"KexAlgorithms=sntrup761x25519-sha512@openssh.com", "kexalgorithms=curve25519-sha256"}) {
    const std::vector<std::string> with_own = host_command(ssh_host({own}), {"true"}).argv;
    EXPECT_EQ(std::find(with_own.begin(), with_own.end(), option), with_own.end()) << own;
  }
}

}  // namespace
}  // namespace rocehil::remote
