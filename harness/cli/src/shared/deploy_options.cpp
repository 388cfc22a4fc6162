#include "shared/deploy_options.hpp"

#include <map>

#include "rocehil/common/error.hpp"

namespace rocehil::cli {

void add_deploy_options(CLI::App* command, DeployFlags& flags) {
  // A flag that may take a value: bare, CLI11 hands it "true", which means the default way.
  command
      ->add_flag("--deploy", flags.mode,
                 "Put this rocehil on each host whose agent is missing or another version "
                 "first: --deploy (=package) installs the --package files with apt-get; "
                 "--deploy=binary copies this executable to the host's 'agent' path")
      ->transform(CLI::Transformer(std::map<std::string, std::string>{{"true", "package"}}))
      ->check(CLI::IsMember({"package", "binary"}))
      ->option_text("[=package|binary]");
  command
      ->add_option("--package", flags.packages,
                   "A .deb for --deploy: rocehil_VERSION_amd64.deb, and rocehil-dpdk_VERSION_"
                   "amd64.deb for DPDK capture (make package builds both); once for each")
      ->check(CLI::ExistingFile);
}

DeployChoice resolve_deploy(const DeployFlags& flags) {
  DeployChoice choice;
  if (flags.mode.empty()) {
    if (!flags.packages.empty())
      throw input_error("--package goes with --deploy: without it nothing is installed");
    return choice;
  }
  choice.mode = preflight::parse_deploy_mode(flags.mode);
  if (choice.mode == preflight::DeployMode::binary) {
    if (!flags.packages.empty())
      throw input_error(
          "--package is for --deploy=package; --deploy=binary copies this executable");
    return choice;
  }
  choice.packages = preflight::read_deb_packages(flags.packages, ROCEHIL_VERSION);
  return choice;
}

std::vector<std::string> deploy_words(const DeployFlags& flags) {
  std::vector<std::string> words;
  if (flags.mode.empty()) return words;
  words.push_back(flags.mode == "binary" ? "--deploy=binary" : "--deploy");
  for (const auto& p : flags.packages) words.insert(words.end(), {"--package", p});
  return words;
}

}  // namespace rocehil::cli
