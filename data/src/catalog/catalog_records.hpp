// SPDX-License-Identifier: Apache-2.0
// The catalog's record readers, one file per kind of record (hardware_records.cpp: GPUs,
// instances, storage tiers; model_records.cpp: models; recipe_records.cpp: framework and engine
// recipes), and the small conversions they share. catalog.cpp reads each catalog file's list
// with them and checks across records.
#pragma once

#include <string>
#include <vector>

#include "capplan/data/catalog.hpp"
#include "reading/json_reader.hpp"

namespace capplan::data::records {

// The reader toolkit (reading/json_reader.hpp) under the names every record reader uses.
using detail::Field;
using detail::json;
using detail::Kind;
using detail::kPositive;
using detail::Need;
using detail::Reader;

inline std::string str(const json& v) { return v.get<std::string>(); }
inline double num(const json& v) { return v.get<double>(); }
inline int integer(const json& v) { return static_cast<int>(v.get<double>()); }
inline std::vector<std::string> strings(const json& v) { return v.get<std::vector<std::string>>(); }

// Ids are kebab-case: lower-case letters, digits, '-', '.', '_' ("aws-p5.48xlarge").
inline void check_id(const json& v, Reader& r, const std::string& p) {
  if (!detail::is_catalog_id(str(v))) {
    r.error(p, "must be a lower-case id of letters, digits, '-', '.' or '_'; got " + detail::describe(v));
  }
}

// One record of each catalog list, read and checked on its own (`p` is its JSON pointer).
GpuEntry read_gpu(const json& j, const std::string& p, Reader& r);
InstanceEntry read_instance(const json& j, const std::string& p, Reader& r);
StorageEntry read_storage_tier(const json& j, const std::string& p, Reader& r);
ModelEntry read_model(const json& j, const std::string& p, Reader& r);
FrameworkEntry read_framework(const json& j, const std::string& p, Reader& r);
EngineEntry read_engine(const json& j, const std::string& p, Reader& r);

}  // namespace capplan::data::records
