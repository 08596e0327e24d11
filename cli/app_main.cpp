// SPDX-License-Identifier: Apache-2.0
#include "app_main.hpp"

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <exception>
#include <iostream>
#include <string>

#include "capplan/data/catalog.hpp"
#include "io.hpp"

namespace capplan::cli {

void add_common_options(CLI::App& app, const std::string& program, GlobalOptions& global) {
  app.set_version_flag("--version", program + " " + CAPPLAN_VERSION);
  app.require_subcommand(1);
  app.fallthrough();  // global options are also accepted after the subcommand
  app.add_option("--data-dir", global.data_dir,
                 "Folder with gpus.json, instances.json, models.json (default: $CAPPLAN_DATA_DIR or the "
                 "installed data)");
}

CLI::Validator output_file_name() {
  return CLI::Validator(
      [](std::string& name) {
        return name.empty() ? std::string("must name a file (or - for standard output); got ''") : std::string();
      },
      "FILE");
}

namespace {

int run_command(CLI::App& app, const std::vector<Command>& commands, int argc, char** argv) {
  try {
    try {
      app.parse(argc, argv);
    } catch (const CLI::CallForHelp& e) {
      return app.exit(e);
    } catch (const CLI::CallForAllHelp& e) {
      return app.exit(e);
    } catch (const CLI::CallForVersion& e) {
      return app.exit(e);
    } catch (const CLI::ParseError& e) {
      // A mistyped command reaches CLI11 as a stray argument: name it, with the closest command.
      bool in_command = false;
      for (const auto& command : commands) in_command = in_command || command.app->parsed();
      const auto rest = app.remaining();
      std::vector<std::string> known;
      for (const auto& command : commands) known.push_back(command.app->get_name());
      if (!in_command && !rest.empty() && !rest.front().starts_with("-")) {
        print_error("unknown command '" + rest.front() + "'; " + data::suggest(rest.front(), known));
      } else if (!in_command && rest.empty() && e.get_name() == "RequiredError") {
        std::string list;
        for (const auto& name : known) list += (list.empty() ? "" : ", ") + name;
        print_error("no command given; give one of: " + list);
      } else {
        print_error(e.what());
      }
      std::cerr << "Run '" << app.get_name() << " --help' or '" << app.get_name() << " <command> --help' for usage.\n";
      return code(Exit::invalid_input);
    }

    for (const auto& command : commands) {
      if (command.app->parsed()) return command.run();
    }
    print_error("no command given");
    return code(Exit::invalid_input);
  } catch (const std::exception& e) {
    std::cerr << "capplan: internal error: " << e.what() << "\n";
    return code(Exit::internal);
  } catch (...) {
    std::cerr << "capplan: internal error: unknown exception\n";
    return code(Exit::internal);
  }
}

// A result that did not reach standard output (a full disk, /dev/full, a closed stdout, a pipe
// whose reader left) is a failure, or a script believes it got one: exit 1
// with the reason on stderr, unless the command already failed with its own code.
int checked_output(int rc) {
  std::cout.flush();
  const int cout_errno = errno;
  const bool failed = !std::cout.good() || std::fflush(stdout) != 0 || std::ferror(stdout) != 0;
  if (!failed) return rc;
  const int err = errno != 0 ? errno : cout_errno;
  print_error(std::string("cannot write to standard output: ") + (err != 0 ? std::strerror(err) : "write error"));
  return rc == code(Exit::ok) || rc == code(Exit::infeasible) ? code(Exit::internal) : rc;
}

}  // namespace

int run_app(CLI::App& app, const std::vector<Command>& commands, int argc, char** argv) {
  // Past a file size limit (`ulimit -f`) a write fails with EFBIG instead of killing the process
  // with SIGXFSZ, so standard output reports "cannot write to standard output" (checked_output)
  // and --out its own error, as for a full disk.
  std::signal(SIGXFSZ, SIG_IGN);
  errno = 0;
  return checked_output(run_command(app, commands, argc, argv));
}

}  // namespace capplan::cli
