// SPDX-License-Identifier: Apache-2.0
// Private helpers of the capplan executable: exit codes, reading inputs, atomic output,
// printing diagnostics and aligned text tables. Only cli/ prints.
#pragma once
#include <expected>
#include <nlohmann/json.hpp>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "capplan/data/catalog.hpp"
#include "capplan/data/error_bands.hpp"
#include "capplan/data/format.hpp"
#include "capplan/data/scenario_io.hpp"
#include "capplan/sim/cost/profile.hpp"
#include "capplan/sim/workload/result.hpp"

namespace capplan::cli {

// CONTRACT.md: 0 success, 2 invalid input (flags included), 3 a valid scenario that cannot run
// when asked to fail on that, 1 internal error.
enum class Exit : int { ok = 0, internal = 1, invalid_input = 2, infeasible = 3 };

constexpr int code(Exit e) { return static_cast<int>(e); }

// Options every subcommand sees (declared on the top-level app, accepted after the subcommand).
struct GlobalOptions {
  std::string data_dir;  // empty = data::default_data_dir()
};

// The whole file, or standard input for "-", through data's bounded reader (at most 64 MiB; a
// device such as /dev/zero is refused). The error is the reason ("No such file or directory").
std::expected<std::string, std::string> read_input(const std::string& path);

// Writes `text` to a temporary file in the same folder and renames it over `path`, so readers
// never see a half-written file. The error is a sentence naming the failing step.
std::expected<void, std::string> write_atomically(const std::filesystem::path& path, std::string_view text);

// Whether `path` can take an --out file, checked before any work is done: its folder exists and
// is writable, it is not a folder, its name fits NAME_MAX. A device or pipe (/dev/null, a FIFO)
// is written in place when `allow_device`, refused otherwise. The error is a sentence.
std::expected<void, std::string> check_output_path(const std::filesystem::path& path, bool allow_device);

// check_output_path for --out (nothing to check for "" or "-"); prints "--out '<path>': <reason>"
// and returns false when it cannot be written.
bool output_path_ok_or_report(const std::string& out_path, bool allow_device = true);

// Whether `path` names an existing regular file to read; prints "<what> '<path>': not a regular
// file" or "...: No such file or directory" and returns false when not.
bool input_file_ok_or_report(const std::filesystem::path& path, std::string_view what);

// check_output_path(path, false) as a sentence, empty when `path` can take the file (calibrate's
// profile and records, --from-runs' profile: files, never a device).
std::string file_out_problem(const std::filesystem::path& path);

// `text` to --out (atomically) when given, else (or for "-") to stdout. Returns false after printing an error.
bool emit(const std::string& out_path, std::string_view text);

// The report in the form --format names: "json" its document indented two spaces with a closing
// newline, "csv" its CSV, anything else its table. Only the chosen form is rendered.
template <class ToJson, class ToCsv, class ToTable>
std::string render_in_format(std::string_view format, ToJson&& to_json, ToCsv&& to_csv, ToTable&& to_table) {
  if (format == "json") return to_json().dump(2) + "\n";
  if (format == "csv") return to_csv();
  return to_table();
}

bool stdout_is_terminal();

// True when --out names a file (not empty, not "-").
bool writes_file(const std::string& out_path);

// --format when given; else from --out's extension (.csv csv, .txt table, anything else json);
// else table on a terminal and json when piped.
std::string choose_format(const std::string& format, const std::string& out_path);

// "capplan: error: <where>: <message>" (or "capplan: warning: ...") on stderr, one line each:
// at most the first kMaxPrintedDiagnostics, then "... and N more"; a line longer than
// kMaxDiagnosticChars is cut (a 10 MB name is not echoed whole).
inline constexpr std::size_t kMaxPrintedDiagnostics = 20;
inline constexpr std::size_t kMaxDiagnosticChars = 4096;
void print_diagnostics(const Diagnostics& diags);
void print_error(std::string_view message);
void print_warning(std::string_view message);
void print_note(std::string_view message);

// Loads the catalogs from --data-dir or the default; prints the problems and returns nullopt
// when they do not load.
std::optional<data::Catalogs> load_catalogs_or_report(const GlobalOptions& global);
std::filesystem::path data_dir(const GlobalOptions& global);

// The scenario file `file` ("-": standard input) into `text`; prints the reason and returns false
// when it cannot be read.
bool read_scenario_or_report(const std::string& file, std::string& text);

// The scenario file named either by the positional argument or by --scenario ("" for neither);
// prints an error and returns nullopt when both are given.
std::optional<std::string> one_scenario_file(const std::string& positional, const std::string& option);

// The scenario document (syntax checked, not yet validated) of `file`, or the built-in example for
// ""; prints what is wrong and returns nullopt.
std::optional<nlohmann::json> scenario_document_or_report(const std::string& file);
// The same for the `text` of `file`, already read (standard input cannot be read twice).
std::optional<nlohmann::json> scenario_text_document_or_report(const std::string& file, const std::string& text);

// Whether the scenario document's object `section` has `key` ("pricing", "currency").
bool has_key(const nlohmann::json& root, std::string_view section, std::string_view key);

// False (the error printed) for a serve workload, which the training commands do not plan.
bool training_scenario_or_report(const data::ParsedScenario& s, std::string_view command);

// The calibration profile at `path` ("-": standard input), validated (data::parse_profile);
// prints what is wrong and returns nullopt.
std::optional<sim::Profile> load_profile_or_report(const std::string& path);
// The same for an optional --profile: `given` false leaves `out` empty. Checked before any work,
// so a bad or truncated file is invalid input naming the field (or the file, line and column).
// False when a bad file was reported.
bool load_optional_profile(bool given, const std::string& path, std::optional<sim::Profile>& out);

// The catalogs' error_bands.json into `bands` (nullopt when there is no such file); prints what
// is wrong and returns false.
bool load_error_bands_or_report(const GlobalOptions& global, std::optional<data::ErrorBands>& bands);

// An aligned plain-text table: a header line, a rule, then the rows. Columns listed in
// `right_aligned` are right-aligned (numbers).
std::string render_table(const std::vector<std::string>& header, const std::vector<std::vector<std::string>>& rows,
                         const std::vector<bool>& right_aligned, std::string_view indent = "");

// Number formatting for tables: fixed decimals; "n/a" for NaN/Inf (the format data's renderers use).
using data::format::fixed;

}  // namespace capplan::cli
