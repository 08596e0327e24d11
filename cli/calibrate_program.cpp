// SPDX-License-Identifier: Apache-2.0
#include "calibrate_program.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <string>
#include <system_error>
#include <vector>

#include "io.hpp"

namespace capplan::cli {
namespace {

// The folder of the running executable (/proc/self/exe), else of argv[0].
std::filesystem::path own_folder(const char* argv0) {
  std::error_code ec;
  auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec || self.empty()) self = std::filesystem::absolute(argv0 != nullptr ? argv0 : "", ec);
  return self.parent_path();
}

}  // namespace

int run_in_calibrate_program(int argc, char** argv) {
  const std::string program = (own_folder(argc > 0 ? argv[0] : nullptr) / kCalibrateProgram).string();
  std::vector<char*> args;
  args.push_back(const_cast<char*>(program.c_str()));
  for (int i = 1; i < argc; ++i) args.push_back(argv[i]);
  args.push_back(nullptr);

  std::cout.flush();
  std::cerr.flush();
  std::fflush(nullptr);
  ::execv(program.c_str(), args.data());

  const int err = errno;
  if (err == ENOENT || err == ENOTDIR) {
    print_error(std::string("the measurement program '") + program + "' is missing: `capplan calibrate` and "
                "`capplan validate` run in it. Build it with capplan (target " + kCalibrateProgram +
                ") and keep it in the same folder as capplan");
    return code(Exit::invalid_input);
  }
  print_error("cannot run the measurement program '" + program + "': " + std::strerror(err));
  return code(Exit::internal);
}

}  // namespace capplan::cli
