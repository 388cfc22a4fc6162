#include "rocehil/remote/as_root.hpp"

namespace rocehil::remote {

std::vector<std::string> as_root(const std::string& program, const std::vector<std::string>& args,
                                 WithoutRoot without_root) {
  std::string script =
      "u=$(id -u); if [ \"$u\" -ne 0 ] && sudo -n true 2>/dev/null; then exec sudo -n \"$0\" "
      "\"$@\"; fi; ";
  if (without_root == WithoutRoot::refuse)
    script +=
        "if [ \"$u\" -ne 0 ]; then echo '" + std::string(not_root_marker) + "' >&2; exit 77; fi; ";
  script += "exec \"$0\" \"$@\"";
  std::vector<std::string> words = {"/bin/sh", "-c", std::move(script), program};
  words.insert(words.end(), args.begin(), args.end());
  return words;
}

}  // namespace rocehil::remote
