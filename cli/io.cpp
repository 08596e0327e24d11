// SPDX-License-Identifier: Apache-2.0
#include "io.hpp"

#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <climits>
#include <cstring>
#include <fstream>
#include <iostream>
#include <iterator>
#include <sstream>
#include <system_error>

#include "capplan/data/findings.hpp"
#include "capplan/data/input_file.hpp"
#include "capplan/data/profile_io.hpp"
#include "capplan/data/scenario_io.hpp"

namespace capplan::cli {

std::expected<std::string, std::string> read_input(const std::string& path) { return data::read_input_file(path); }

namespace {

// What an --out path names once its symbolic links are followed. `file` is the regular file (or
// the name of the file to create) that the atomic write replaces: a link is kept and its target
// written, never the link replaced by a file. `in_place` is set for a device, pipe or socket and
// for the kernel's links to open files (/dev/stdout, /dev/fd/N, /proc/self/fd/N, all under
// /proc): those are opened and written as they are, since a file renamed over them would replace
// the link (as root, the system's /dev/stdout).
struct OutTarget {
  std::filesystem::path file;
  bool in_place = false;
};

std::expected<OutTarget, std::string> out_target(const std::filesystem::path& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const auto followed = fs::status(path, ec);
  if (fs::exists(followed) && !fs::is_regular_file(followed) && !fs::is_directory(followed)) {
    return OutTarget{path, true};
  }
  fs::path p = path;
  for (int hops = 0;; ++hops) {
    if (hops == 40) return std::unexpected(std::string("too many levels of symbolic links"));
    if (!fs::is_symlink(fs::symlink_status(p, ec))) break;
    const fs::path link = fs::read_symlink(p, ec);
    if (ec) return std::unexpected("cannot read the symbolic link '" + p.string() + "': " + ec.message());
    p = (link.is_absolute() ? link : p.parent_path() / link).lexically_normal();
    if (p.string().starts_with("/proc/")) return OutTarget{path, true};
  }
  return OutTarget{p, false};
}

}  // namespace

std::expected<void, std::string> check_output_path(const std::filesystem::path& path, bool allow_device) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (path.empty() || path.filename().empty()) return std::unexpected(std::string("must name a file"));
  if (fs::is_directory(path, ec)) return std::unexpected(std::string("is a directory"));
  auto target = out_target(path);
  if (!target) return std::unexpected(target.error());
  if (target->in_place) {
    if (allow_device) return {};  // written in place (write_atomically)
    return std::unexpected(std::string("is not a regular file (a device or a pipe)"));
  }
  const fs::path& file = target->file;
  const std::string via = file == path ? std::string() : " (the symbolic link's target '" + file.string() + "')";
  const fs::path dir = file.has_parent_path() ? file.parent_path() : fs::path(".");
  if (!fs::is_directory(dir, ec)) return std::unexpected("folder '" + dir.string() + "' does not exist" + via);
  if (::access(dir.c_str(), W_OK) != 0) return std::unexpected("folder '" + dir.string() + "' is not writable" + via);
  // An existing file is replaced only when it may be written: access() for this user, and at
  // least one write permission bit, so a file made read-only (chmod 444) is kept even for root,
  // whom access() never refuses (the rename beside it would otherwise replace it silently).
  if (struct stat st{}; ::stat(file.c_str(), &st) == 0) {
    if (::access(file.c_str(), W_OK) != 0 || (st.st_mode & (S_IWUSR | S_IWGRP | S_IWOTH)) == 0) {
      char mode[8];
      std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(st.st_mode & 07777));
      return std::unexpected(std::string("is not writable (mode ") + mode + ")" + via +
                             "; make it writable or name another file");
    }
  }
  // The temporary file beside it keeps 200 characters of the name (write_atomically), so any name
  // the file system takes (NAME_MAX) works.
  if (file.filename().string().size() > NAME_MAX) {
    return std::unexpected("file name too long (" + std::to_string(file.filename().string().size()) +
                           " characters; at most " + std::to_string(NAME_MAX) + ")");
  }
  return {};
}

bool output_path_ok_or_report(const std::string& out_path, bool allow_device) {
  if (!writes_file(out_path)) return true;
  if (auto ok = check_output_path(out_path, allow_device); !ok) {
    print_error("--out '" + out_path + "': " + ok.error());
    return false;
  }
  return true;
}

bool input_file_ok_or_report(const std::filesystem::path& path, std::string_view what) {
  std::error_code ec;
  if (std::filesystem::is_regular_file(path, ec)) return true;
  print_error(std::string(what) + " '" + path.string() +
              "': " + (std::filesystem::exists(path, ec) ? "not a regular file" : "No such file or directory"));
  return false;
}

std::string file_out_problem(const std::filesystem::path& path) {
  auto ok = check_output_path(path, false);
  return ok ? std::string() : ok.error();
}

std::expected<void, std::string> write_atomically(const std::filesystem::path& path, std::string_view text) {
  namespace fs = std::filesystem;
  if (auto ok = check_output_path(path, true); !ok) return ok;
  auto target = out_target(path);
  if (!target) return std::unexpected(target.error());
  if (target->in_place) {
    // A device, pipe or socket (/dev/null, a FIFO) or a link to an open file (/dev/stdout): written
    // in place; renaming a file over it would replace it.
    std::ofstream out(path, std::ios::binary);
    if (!out) return std::unexpected(std::string("cannot open: ") + std::strerror(errno));
    out.write(text.data(), static_cast<std::streamsize>(text.size()));
    out.flush();
    if (!out) return std::unexpected(std::string("cannot write: ") + std::strerror(errno));
    return {};
  }
  // Through a symbolic link, its target is replaced (in the target's folder) and the link kept.
  const fs::path& file = target->file;
  const fs::path dir = file.has_parent_path() ? file.parent_path() : fs::path(".");
  std::error_code ec;
  struct stat existing{};
  const bool replaces = ::stat(file.c_str(), &existing) == 0;
  // Hidden temp file beside the target, so the rename is atomic (same file system). The target's
  // name is cut to 200 characters in it, so that the temporary name fits NAME_MAX (255) even for
  // a target name of 255 characters. The pid and a per-process counter make it
  // this write's own (O_EXCL), so concurrent writers of one --out never share a temporary file:
  // the last rename wins and the target is always one writer's whole document.
  static std::atomic<unsigned> serial{0};
  std::string tmp_name = ".";
  tmp_name += file.filename().string().substr(0, 200);
  tmp_name += ".tmp.";
  tmp_name += std::to_string(::getpid());
  tmp_name += ".";
  tmp_name += std::to_string(serial++);
  const fs::path tmp = dir / tmp_name;
  // SIGINT, SIGTERM and SIGHUP wait until the temporary file is renamed or removed
  // (milliseconds), then act as they would have: a signal in the middle of the write killed the
  // process and left the temporary file behind. SIGXFSZ (past a file size limit,
  // `ulimit -f`) is ignored, so that write() fails with EFBIG and is reported like a full disk.
  // Only SIGKILL can still leave a temporary file.
  std::signal(SIGXFSZ, SIG_IGN);
  sigset_t block, previous;
  sigemptyset(&block);
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) sigaddset(&block, sig);
  ::pthread_sigmask(SIG_BLOCK, &block, &previous);
  const auto failed = [&](std::string what, int fd) -> std::expected<void, std::string> {
    const std::string reason = std::strerror(errno);
    if (fd >= 0) ::close(fd);
    std::error_code ignored;
    fs::remove(tmp, ignored);
    ::pthread_sigmask(SIG_SETMASK, &previous, nullptr);
    return std::unexpected(std::move(what) + ": " + reason);
  };
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
  if (fd < 0) return failed("cannot create '" + tmp.string() + "'", -1);
  if (replaces) {
    // The replaced file's permissions (a 0600 file stays private) and, where allowed, its owner.
    if (::fchmod(fd, existing.st_mode & 07777) != 0) return failed("cannot set the mode of '" + tmp.string() + "'", fd);
    if (::fchown(fd, existing.st_uid, existing.st_gid) != 0) {
      // Only a privileged user may give a file away; the new file stays this user's.
    }
  }
  for (std::size_t at = 0; at < text.size();) {
    const ssize_t n = ::write(fd, text.data() + at, text.size() - at);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return failed("cannot write '" + tmp.string() + "'", fd);
    at += static_cast<std::size_t>(n);
  }
  // On disk before the rename, so a crash or power loss leaves the old file or the new, never an
  // empty one (ext4 and XFS may otherwise order the rename before the data).
  if (::fsync(fd) != 0 && errno != EINVAL) return failed("cannot write '" + tmp.string() + "'", fd);
  if (::close(fd) != 0) return failed("cannot write '" + tmp.string() + "'", -1);
  fs::rename(tmp, file, ec);
  if (ec) {
    std::error_code ignored;
    fs::remove(tmp, ignored);
    ::pthread_sigmask(SIG_SETMASK, &previous, nullptr);
    return std::unexpected("cannot rename the temporary file over it: " + ec.message());
  }
  ::pthread_sigmask(SIG_SETMASK, &previous, nullptr);
  return {};
}

bool emit(const std::string& out_path, std::string_view text) {
  if (out_path.empty() || out_path == "-") {
    std::cout << text;
    std::cout.flush();
    return true;
  }
  if (auto written = write_atomically(out_path, text); !written) {
    print_error("--out '" + out_path + "': " + written.error());
    return false;
  }
  return true;
}

bool stdout_is_terminal() { return ::isatty(STDOUT_FILENO) == 1; }

bool writes_file(const std::string& out_path) { return !out_path.empty() && out_path != "-"; }

std::string choose_format(const std::string& format, const std::string& out_path) {
  if (!format.empty()) return format;
  if (writes_file(out_path)) {
    const std::string ext = std::filesystem::path(out_path).extension().string();
    if (ext == ".csv") return "csv";
    if (ext == ".txt") return "table";
    return "json";
  }
  return stdout_is_terminal() ? "table" : "json";
}

void print_diagnostics(const Diagnostics& diags) {
  // Error amplification: 100k unknown keys printed 26 MB. The first
  // kMaxPrintedDiagnostics are printed, each cut to kMaxDiagnosticChars, then a count of the rest.
  std::size_t printed = 0;
  for (const auto& d : diags) {
    if (printed == kMaxPrintedDiagnostics) {
      std::cerr << "capplan: error: ... and " << diags.size() - printed << " more (the first " << printed
                << " are shown)\n";
      break;
    }
    const char* kind = d.severity == Diagnostic::Severity::error ? "error" : "warning";
    std::string line = (d.where.empty() ? "" : d.where + ": ") + data::message(d);
    if (line.size() > kMaxDiagnosticChars) {
      const std::size_t cut = line.size() - kMaxDiagnosticChars;
      line.resize(kMaxDiagnosticChars);
      line += "... (" + std::to_string(cut) + " more characters)";
    }
    std::cerr << "capplan: " << kind << ": " << line << "\n";
    ++printed;
  }
}

void print_error(std::string_view message) { std::cerr << "capplan: error: " << message << "\n"; }
void print_warning(std::string_view message) { std::cerr << "capplan: warning: " << message << "\n"; }
void print_note(std::string_view message) { std::cerr << "capplan: " << message << "\n"; }

std::filesystem::path data_dir(const GlobalOptions& global) {
  return global.data_dir.empty() ? data::default_data_dir() : std::filesystem::path(global.data_dir);
}

std::optional<data::Catalogs> load_catalogs_or_report(const GlobalOptions& global) {
  const auto dir = data_dir(global);
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec)) {
    print_error("data folder '" + dir.string() + "': not found (set --data-dir or CAPPLAN_DATA_DIR)");
    return std::nullopt;
  }
  auto catalogs = data::load_catalogs(dir);
  if (!catalogs) {
    print_diagnostics(catalogs.error());
    return std::nullopt;
  }
  return std::move(*catalogs);
}

bool read_scenario_or_report(const std::string& file, std::string& text) {
  auto read = read_input(file);
  if (!read) {
    print_error((file == "-" ? std::string("scenario from standard input") : "scenario file '" + file + "'") + ": " +
                read.error());
    return false;
  }
  text = std::move(*read);
  return true;
}

std::optional<std::string> one_scenario_file(const std::string& positional, const std::string& option) {
  if (!positional.empty() && !option.empty()) {
    print_error("scenario file given twice ('" + positional + "' and --scenario '" + option + "'); give one");
    return std::nullopt;
  }
  return positional.empty() ? option : positional;
}

std::optional<nlohmann::json> scenario_document_or_report(const std::string& file) {
  if (file.empty()) return data::example_scenario();
  std::string text;
  if (!read_scenario_or_report(file, text)) return std::nullopt;
  return scenario_text_document_or_report(file, text);
}

std::optional<nlohmann::json> scenario_text_document_or_report(const std::string& file, const std::string& text) {
  if (file.empty()) return data::example_scenario();
  auto document = data::parse_scenario_document(text, "scenario");
  if (!document) {
    print_diagnostics(document.error());
    return std::nullopt;
  }
  return std::move(*document);
}

std::optional<sim::Profile> load_profile_or_report(const std::string& path) {
  auto read = read_input(path);
  if (!read) {
    print_error("profile file '" + path + "': " + read.error());
    return std::nullopt;
  }
  auto profile = data::parse_profile(*read, path == "-" ? std::string("profile") : path);
  if (!profile) {
    print_diagnostics(profile.error());
    return std::nullopt;
  }
  return std::move(*profile);
}

bool load_optional_profile(bool given, const std::string& path, std::optional<sim::Profile>& out) {
  if (!given) return true;
  out = load_profile_or_report(path);
  return out.has_value();
}

bool load_error_bands_or_report(const GlobalOptions& global, std::optional<data::ErrorBands>& bands) {
  auto loaded = data::load_error_bands(data::error_bands_path(data_dir(global)));
  if (!loaded) {
    print_diagnostics(loaded.error());
    return false;
  }
  bands = std::move(*loaded);
  return true;
}

std::string render_table(const std::vector<std::string>& header, const std::vector<std::vector<std::string>>& rows,
                         const std::vector<bool>& right_aligned, std::string_view indent) {
  std::vector<size_t> width(header.size(), 0);
  for (size_t c = 0; c < header.size(); ++c) width[c] = header[c].size();
  for (const auto& row : rows) {
    for (size_t c = 0; c < row.size() && c < width.size(); ++c) width[c] = std::max(width[c], row[c].size());
  }
  auto format_row = [&](const std::vector<std::string>& row) {
    std::string line(indent);
    for (size_t c = 0; c < width.size(); ++c) {
      const std::string cell = c < row.size() ? row[c] : "";
      const size_t pad = width[c] - std::min(width[c], cell.size());
      const bool right = c < right_aligned.size() && right_aligned[c];
      if (c > 0) line += "  ";
      if (right) line.append(pad, ' ');
      line += cell;
      if (!right && c + 1 < width.size()) line.append(pad, ' ');
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    return line + "\n";
  };
  std::string out = format_row(header);
  std::string rule(indent);
  for (size_t c = 0; c < width.size(); ++c) rule += (c > 0 ? "  " : "") + std::string(width[c], '-');
  out += rule + "\n";
  for (const auto& row : rows) out += format_row(row);
  return out;
}

bool has_key(const nlohmann::json& root, std::string_view section, std::string_view key) {
  if (!root.is_object()) return false;
  auto it = root.find(section);
  return it != root.end() && it->is_object() && it->contains(key);
}

bool training_scenario_or_report(const data::ParsedScenario& s, std::string_view command) {
  if (s.scenario.workload.kind != sim::WorkloadKind::serve) return true;
  print_error("scenario#/workload/kind: a serve workload is planned by capplan serve, not capplan " +
              std::string(command));
  return false;
}

}  // namespace capplan::cli
