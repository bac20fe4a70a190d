// The CPU attention work item for avx2 (8 floats per vector); see attention_kernel.inc.
#include "attention_cpu.hpp"

namespace hdlab::executor::cpu {
#define HDLAB_ATTN_FN attend_tile_avx2
#define HDLAB_ATTN_LANES 8
#define HDLAB_ATTN_ROWS 2
#define HDLAB_ATTN_BLOCK 4
#include "attention_kernel.inc"
}  // namespace hdlab::executor::cpu
