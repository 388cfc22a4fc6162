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

// Within 10% of the rate asked, the rate was held; outside, run.json says so and why, from what
// was measured (the engine's held time), so a sender that could not go faster (rxe on an emulated
// guest) is not read as a pacer that failed.
constexpr double held_within = 0.10;

void judge_reached(nlohmann::json& s, const std::optional<agent::PacingReport>& pacing,
                   double seconds) {
  const double asked = s.value("asked_bps", 0.0);
  if (!s.contains("reached_bps") || asked <= 0) return;
  const double ratio = s["reached_bps"].get<double>() / asked;
  s["reached_ratio"] = ratio;
  s["held"] = ratio >= 1 - held_within && ratio <= 1 + held_within;
  if (s["held"].get<bool>()) return;
  const std::string method = s.value("method", "");
  std::string why;
  if (ratio > 1) {
    why = fmt::format("reached {:.0f}% of the rate asked: the {} let more through", ratio * 100,
                      method == "nic"      ? "NIC's limiter"
                      : method == "engine" ? "token bucket"
                                           : method);
  } else if (method == "engine" && pacing && pacing->held_s && seconds > 0 &&
             *pacing->held_s / seconds < held_within) {
    // Hardly ever held back with room to post: whatever the bucket lost meanwhile, the sender's
    // queues were full or it was slow; the pacer was not the limit.
    why = fmt::format(
        "reached {:.0f}% of the rate asked while the token bucket held it back "
        "only {:.1f}% of its {:.1f} s: the sender itself (its CPU, NIC or path) "
        "went no faster; an unpaced run of the test shows its ceiling",
        ratio * 100, *pacing->held_s / seconds * 100, seconds);
  } else if (method == "engine" && pacing && pacing->lost_s && seconds > 0 &&
             *pacing->lost_s / seconds >= (1 - ratio) / 2) {
    // Held back, and at least half the shortfall is rate the bucket threw away full: the sender
    // was not there to take its tokens within the burst.
    why = fmt::format(
        "reached {:.0f}% of the rate asked: {:.2f} s of its {:.1f} s worth of "
        "tokens overflowed the token bucket's burst while the sender was away "
        "(asleep past its wake-up, or its queues full): the sender came back too "
        "late, not the pacer held it; the results' cpu says how late its threads "
        "woke",
        ratio * 100, *pacing->lost_s, seconds);
  } else if (method == "engine" && pacing && pacing->held_s && seconds > 0) {
    why = fmt::format(
        "reached {:.0f}% of the rate asked although the token bucket held it back "
        "{:.1f}% of its {:.1f} s: its completions came slower than the rate (a "
        "peer or a path that did not keep up between bursts)",
        ratio * 100, *pacing->held_s / seconds * 100, seconds);
  } else if (method == "nic") {
    why = fmt::format(
        "reached {:.0f}% of the rate asked under the NIC's limiter (which says "
        "nothing of its own holding): the sender, its path, or the NIC's rate "
        "table fell short",
        ratio * 100);
  } else {
    why = fmt::format("reached {:.0f}% of the rate asked under {}", ratio * 100,
                      method.empty() ? std::string("the pacer") : method);
  }
  s["why_not_held"] = why;
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
    if (results.pacing->held_s) s["held_back_s"] = *results.pacing->held_s;
    if (results.pacing->lost_s) s["lost_to_full_bucket_s"] = *results.pacing->lost_s;
    if (results.pacing->burst_s) s["burst_s"] = *results.pacing->burst_s;
  }
  // A rate that was not measured is absent, never 0.
  if (results.seconds > 0)
    s["reached_bps"] = static_cast<double>(results.bytes) * 8 / results.seconds;
  judge_reached(s, results.pacing, results.seconds);
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
  judge_reached(s, std::nullopt, 0);
  return summary(settings, std::move(s));
}

}  // namespace rocehil::run::case_traffic
