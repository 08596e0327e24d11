// SPDX-License-Identifier: Apache-2.0
// The one reader of every file a user hands capplan (scenario, profile, records, price sheet,
// published-runs CSV, catalogs; "-" for standard input), for the CLI and the desktop app alike.
// It is bounded: a file larger than kMaxInputBytes is refused rather than read
// without end, and a device (/dev/zero, /dev/urandom) is refused before reading. Pipes and
// standard input are read up to the same limit.
#pragma once
#include <cstddef>
#include <expected>
#include <string>

namespace capplan::data {

// 64 MiB: the largest capplan file shipped is under 1 MiB; a scenario is a few kB.
inline constexpr std::size_t kMaxInputBytes = std::size_t{64} << 20;

// The whole file at `path` ("-": standard input). The error is a reason without the file name
// ("No such file or directory", "larger than 64 MiB, the limit for an input file").
std::expected<std::string, std::string> read_input_file(const std::string& path,
                                                        std::size_t max_bytes = kMaxInputBytes);

}  // namespace capplan::data
