#include "cases/case_pacing.hpp"

#include <fmt/format.h>

namespace rocehil::run::case_traffic {

namespace {

nlohmann::json summary(const suites::TestSettings& settings, nlohmann::json sender) {
  return {{"rate", settings.rate->text}, {"senders", nlohmann::json::array({std::move(sender)})}};
}

nlohmann::json sender_json(const suites::TestSettings& settings, const std::string& host,
                           const inventory::Nic& nic) {
  nlohmann::json j{{"host", host}, {"asked_bps", sender_rate_bps(settings, nic)}};
  if (nic.link_gbps > 0) j["link_gbps"] = nic.link_gbps;
  return j;
}

}  // namespace

double sender_rate_bps(const suites::TestSettings& settings, const inventory::Nic& nic) {
  if (!settings.rate) return 0;
  return settings.rate->bits_per_s(nic.link_gbps * 1e9);
}

void check_rate(const std::string& suite_file, const suites::SuiteTest& test,
                const std::vector<const inventory::Host*>& senders,
                std::vector<std::string>& problems) {
  if (!test.settings.rate) return;
  const suites::Rate& rate = *test.settings.rate;
  const std::string at =
      fmt::format("{}:{}:{}: test '{}': rate '{}'", suite_file, test.settings.rate_where.line,
                  test.settings.rate_where.column, test.name, rate.text);
  for (const inventory::Host* host : senders) {
    if (host->nics.empty()) continue;
    const inventory::Nic& nic = host->nics.front();
    if (rate.percent && nic.link_gbps <= 0)
      problems.push_back(fmt::format(
          "{}: a share of the link, but the inventory gives no link_gbps for {}'s NIC {} (add "
          "'link_gbps' to it, or write the rate in bit/s)",
          at, host->name, nic.device.empty() ? nic.netdev : nic.device));
    else if (!rate.percent && nic.link_gbps > 0 && rate.value > nic.link_gbps * 1e9)
      problems.push_back(
          fmt::format("{}: above {}'s link of {:g} Gbit/s: a sender cannot send faster than its "
                      "NIC's port (lower the rate, or write it as a share such as 50%)",
                      at, host->name, nic.link_gbps));
  }
}

nlohmann::json pacing_json(const suites::TestSettings& settings, const std::string& host,
                           const inventory::Nic& nic, const agent::ResultsEvent& results) {
  if (!settings.rate) return nullptr;
  nlohmann::json s = sender_json(settings, host, nic);
  if (results.pacing) {
    s["method"] = results.pacing->method;
    if (!results.pacing->nic_refused.empty()) s["nic_refused"] = results.pacing->nic_refused;
  }
  // A rate that was not measured is absent, never 0.
  if (results.seconds > 0)
    s["reached_bps"] = static_cast<double>(results.bytes) * 8 / results.seconds;
  return summary(settings, std::move(s));
}

nlohmann::json perftest_pacing_json(const suites::TestSettings& settings, const std::string& host,
                                    const inventory::Nic& nic,
                                    const agent::PerftestResultsEvent* results) {
  if (!settings.rate) return nullptr;
  nlohmann::json s = sender_json(settings, host, nic);
  s["method"] = "perftest";
  // perftest's own average over its measured interval (its bytes / its time, in Gbit/s).
  if (results != nullptr && results->report && results->report->bw)
    s["reached_bps"] = results->report->bw->average_gbps * 1e9;
  return summary(settings, std::move(s));
}

}  // namespace rocehil::run::case_traffic
