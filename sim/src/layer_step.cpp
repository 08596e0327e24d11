// SPDX-License-Identifier: Apache-2.0
#include "capplan/sim/layer_step.hpp"
