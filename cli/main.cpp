// SPDX-License-Identifier: Apache-2.0
// capplan: LLM training cost and capacity planner. Parses the command line, runs one subcommand
// and maps every outcome to the exit codes of CONTRACT.md.
#include <CLI/CLI.hpp>
#include <exception>
#include <iostream>
#include <string>
#include <vector>

#include "capplan/data/catalog.hpp"
#include "commands.hpp"
#include "io.hpp"

int main(int argc, char** argv) {
  using namespace capplan::cli;
  try {
    CLI::App app{"capplan: LLM training cost and capacity planner", "capplan"};
    app.set_version_flag("--version", std::string("capplan ") + CAPPLAN_VERSION);
    app.require_subcommand(1);
    app.fallthrough();  // global options are also accepted after the subcommand

    GlobalOptions global;
    app.add_option("--data-dir", global.data_dir,
                   "Folder with gpus.json, instances.json, models.json (default: $CAPPLAN_DATA_DIR or the "
                   "installed data)");

    const std::vector<Command> commands = {
        add_estimate_command(app, global),
        add_catalog_command(app, global),
        add_validate_published_command(app, global),
        add_search_command(app, global),
        add_calibrate_command(app, global),
        add_validate_command(app, global),
    };

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
        print_error("unknown command '" + rest.front() + "'; " + capplan::data::suggest(rest.front(), known));
      } else if (!in_command && rest.empty() && e.get_name() == "RequiredError") {
        std::string list;
        for (const auto& name : known) list += (list.empty() ? "" : ", ") + name;
        print_error("no command given; give one of: " + list);
      } else {
        print_error(e.what());
      }
      std::cerr << "Run 'capplan --help' or 'capplan <command> --help' for usage.\n";
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
