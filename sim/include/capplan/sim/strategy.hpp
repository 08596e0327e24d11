// SPDX-License-Identifier: Apache-2.0
#pragma once
#include <optional>
#include <string>

namespace capplan::sim {

enum class Recompute { none, selective, full };
const char* to_string(Recompute r);
std::optional<Recompute> recompute_from_string(const std::string& s);

// A complete parallel layout. Contract (Megatron-Core): tp*pp*dp*cp == GPUs once validated, and
// ep*etp divides tp*dp*cp (experts spread over the same ranks).
struct Parallelism {
  int tp = 1;
  int pp = 1;
  int dp = 1;
  int cp = 1;
  int ep = 1;   // expert parallel: carved out of the tp*dp*cp ranks (Megatron-Core), divides them
  int etp = 1;  // expert tensor parallel (1 = experts whole on each EP rank)
  int micro_batch = 1;     // sequences per micro-batch per data-parallel rank
  int virtual_stages = 1;  // interleaved 1F1B chunks per pipeline rank (1 = plain 1F1B)
  int zero = 0;            // ZeRO stage 0..3 (3 = FSDP full sharding)
  Recompute recompute = Recompute::selective;
  bool sequence_parallel = false;
  bool overlap_dp_comm = true;  // gradient reduction overlapped with backward (bucketed)
  // Tensor-parallel all-gather/reduce-scatter split into chunks and overlapped with the adjacent
  // GEMMs (Megatron-Core/Transformer Engine userbuffers, NeMo's tp_comm_overlap). Off by default,
  // as in Megatron-LM.
  bool tp_comm_overlap = false;
  // Pipeline send/recv overlapped with compute (Megatron's overlap_p2p_comm, interleaved schedule).
  bool pp_comm_overlap = false;
  // Expert-parallel all-to-all (dispatch/combine) of one micro-batch overlapped with the compute of
  // another: Megatron-Core's --overlap-moe-expert-parallel-comm (off by default), DeepSeek-V3's
  // DualPipe (DeepSeek-V3 report, Sec. 3.2.1). Off by default.
  bool ep_comm_overlap = false;
  // Megatron-Core's --recompute-modules beyond core_attn (with selective recompute only): the
  // norms' outputs (`layernorm`) and the routed experts' activation output (`moe_act`) are not
  // kept for backward; their forward runs again from the kept inputs. Off by default.
  bool recompute_norms = false;
  bool recompute_moe_act = false;

  auto operator<=>(const Parallelism&) const = default;
};

// What the user asked for: each field either fixed or left to capplan ("auto").
struct StrategyRequest {
  std::optional<int> tp, pp, dp, cp, ep, etp, micro_batch, virtual_stages, zero;
  std::optional<Recompute> recompute;
  std::optional<bool> sequence_parallel;
  std::optional<bool> overlap_dp_comm;
  std::optional<bool> tp_comm_overlap;
  std::optional<bool> pp_comm_overlap;
  std::optional<bool> ep_comm_overlap;
  std::optional<bool> recompute_norms;
  std::optional<bool> recompute_moe_act;
  // The framework has no selective recompute (full-layer checkpointing only): not searched.
  bool selective_recompute = true;

  bool fully_specified() const {
    return tp && pp && dp && micro_batch && virtual_stages && zero && recompute && sequence_parallel;
  }
};

}  // namespace capplan::sim
