// SPDX-License-Identifier: Apache-2.0
#include "capplan/data/input_file.hpp"

#include <sys/stat.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

namespace capplan::data {

namespace {

std::string limit_text(std::size_t max_bytes) {
  if (max_bytes % (std::size_t{1} << 20) == 0) return std::to_string(max_bytes >> 20) + " MiB";
  return std::to_string(max_bytes) + " bytes";
}

}  // namespace

std::expected<std::string, std::string> read_input_file(const std::string& path, std::size_t max_bytes) {
  const bool standard_input = path == "-";
  std::FILE* f = standard_input ? stdin : nullptr;
  if (!standard_input) {
    struct stat st{};
    if (::stat(path.c_str(), &st) != 0) return std::unexpected(std::string(std::strerror(errno)));
    if (S_ISDIR(st.st_mode)) return std::unexpected(std::string(std::strerror(EISDIR)));
    if (S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode)) {
      return std::unexpected(std::string("a device, not a file (capplan reads files, pipes and standard input)"));
    }
    if (S_ISREG(st.st_mode) && static_cast<std::size_t>(st.st_size) > max_bytes) {
      return std::unexpected("larger than " + limit_text(max_bytes) + ", the limit for an input file; got " +
                             std::to_string(st.st_size) + " bytes");
    }
    errno = 0;
    f = std::fopen(path.c_str(), "rb");
    if (f == nullptr) return std::unexpected(std::string(std::strerror(errno != 0 ? errno : ENOENT)));
  }
  std::string text;
  char chunk[65536];
  std::size_t n = 0;
  bool too_large = false;
  while ((n = std::fread(chunk, 1, sizeof chunk, f)) > 0) {
    if (text.size() + n > max_bytes) {
      too_large = true;  // a pipe or a growing file: stop at the limit rather than read on
      break;
    }
    text.append(chunk, n);
  }
  const bool failed = std::ferror(f) != 0;
  const int err = errno;
  if (!standard_input) std::fclose(f);
  if (too_large) return std::unexpected("larger than " + limit_text(max_bytes) + ", the limit for an input file");
  if (failed) return std::unexpected(std::string(std::strerror(err != 0 ? err : EIO)));
  return text;
}

}  // namespace capplan::data
