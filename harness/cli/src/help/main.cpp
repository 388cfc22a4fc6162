// rocehil: qualify RoCEv2 fabrics for GPU training clusters.

#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <new>
#include <string_view>

#include "help/command_tree.hpp"
#include "rocehil/common/error.hpp"

int main(int argc, char** argv) {
  CLI::App app;
  int exit_code = 0;
  rocehil::cli::add_commands(app, exit_code);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int cli_code = app.exit(e);
    return cli_code == 0 ? 0 : static_cast<int>(rocehil::ExitCode::bad_input);
  } catch (const rocehil::Error& e) {
    std::fflush(stdout);
    // One line per problem (an inventory can have many), each marked as an error.
    std::string_view rest = e.what();
    do {
      const auto nl = rest.find('\n');
      fmt::print(stderr, "rocehil: error: {}\n", rest.substr(0, nl));
      rest = nl == std::string_view::npos ? std::string_view{} : rest.substr(nl + 1);
    } while (!rest.empty());
    return static_cast<int>(e.exit_code());
  } catch (const std::bad_alloc&) {
    fmt::print(stderr, "rocehil: error: out of memory\n");
    return static_cast<int>(rocehil::ExitCode::infrastructure);
  }
  return exit_code;
}
