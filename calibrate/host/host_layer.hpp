// SPDX-License-Identifier: Apache-2.0
#pragma once
// The host training step: one kernel per entry of sim::layer_step_ops (the estimate's own op list,
// sliced to one layer), in its order, for every layer, forward then backward. The runner knows no
// layer: it reads each op's shape, bytes and role.
//   GemmOp   -> an Eigen GEMM of that (m, n, k) `batch` times, in the op's dtype (fp32 natively,
//               bf16/fp16 through Eigen::bfloat16/half storage as the GEMM sweep measures them);
//               fp8 and tf32 are not available on a CPU, and fused (flash) attention has no host
//               kernel: both are refused with the reason (measure the unfused layer on the host).
//   MemoryOp -> the host kernel of its role (host_kernels.hpp: LayerNorm or RMSNorm, causal softmax,
//               GELU or SwiGLU, residual add, RoPE; forward or backward by the op's phase), else a
//               streaming copy. Memory kernels run on fp32 buffers sized so that the kernel moves
//               the op's bytes (what it reads plus writes), as the memory sweep sizes its patterns.
// Each entry runs count times when its count is a whole number (else once, its time scaled by
// count); its time goes to its component (sim::LayerComponent). Buffers are scratch per entry,
// filled once with values in [-1, 1): the kernels' data do not flow from one op to the next.
#include <Eigen/Core>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "host_kernels.hpp"

#include "capplan/sim/cost/layer_step.hpp"
#include "capplan/sim/workload/result.hpp"

namespace capplan::calib::host {

struct ComponentTimes {
  double gemm = 0, attention = 0, memory = 0;
  double total() const { return gemm + attention + memory; }
};

class LayerStepRunner {
 public:
  // One kernel of the step.
  struct Kernel {
    std::string op;      // the op list entry's name
    std::string kernel;  // what runs for it ("gemm bf16", "layernorm_backward", "copy", ...)
    sim::Phase phase = sim::Phase::forward;
    sim::LayerComponent component = sim::LayerComponent::gemm;
    int runs = 1;        // calls per layer
    double scale = 1.0;  // time factor: count / runs
    std::function<void()> run;
  };

  // Contract: the shape passes sim::check(). Fails (naming the field) for ops the host cannot run.
  static Result<LayerStepRunner> create(const sim::LayerStepShape& shape, std::uint32_t seed = 1234);

  // One training step: the forward kernels of every layer, then the backward kernels of every
  // layer. Adds each kernel's thread CPU time (times its scale) to `times` when given.
  void step(ComponentTimes* times);

  const std::vector<Kernel>& kernels() const { return kernels_; }

 private:
  LayerStepRunner() = default;
  int layers_ = 1;
  std::vector<Kernel> kernels_;
};

}  // namespace capplan::calib::host
