// SPDX-License-Identifier: Apache-2.0
#pragma once
// All-to-all for the CUDA backend's collectives, on any NCCL 2.x. ncclAlltoAll exists only from
// NCCL 2.28; the library loaded at run time may be older than the headers capplan was built with
// (a pip wheel such as nvidia-nccl-cu13 beside a toolkit's nccl.h), so the call is never linked:
// it is resolved with dlsym when the headers declare it, the library reports 2.28 or later
// (ncclGetVersion) and exports the symbol. Otherwise every rank sends and receives one chunk to and
// from every rank inside one NCCL group, as nccl-tests' alltoall does (src/alltoall.cu).
// Compiled only with NCCL (CAPPLAN_HAVE_NCCL).
#include <cuda_runtime_api.h>
#include <nccl.h>

#include <cstddef>

namespace capplan::calib::cuda {

enum class AlltoallPath { native, grouped_send_recv };
const char* to_string(AlltoallPath path);  // "native", "grouped send/recv"

// The path this process runs: native only with headers >= 2.28, a library >= 2.28 and the symbol
// resolved; grouped send/recv otherwise.
AlltoallPath alltoall_path();

// Sends `count_per_rank` elements of `type` from send + r * chunk to rank r and receives rank r's
// into recv + r * chunk, for every rank r of `comm` (chunk = count_per_rank elements). `native` on
// a process where alltoall_path() is not native returns ncclInvalidUsage; a type whose size is
// not known here returns ncclInvalidArgument.
ncclResult_t all_to_all(const void* send, void* recv, std::size_t count_per_rank, ncclDataType_t type,
                        ncclComm_t comm, cudaStream_t stream, AlltoallPath path);

}  // namespace capplan::calib::cuda
