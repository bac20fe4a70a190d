#pragma once
// The per-token step of mHC's coefficients (the mhc_coefficients op, mhc_op.hpp; semantics
// in model/src/designs/mhc.cpp), shared by its CPU and CUDA kernels: from one token's
// logits g [n + n + n^2] (the projection already divided by the state's RMS) to its
// alpha [n, 1+n] (H_pre in column 0, H_res^T in columns 1..n) and beta [n] (H_post).
#include <cmath>
#include <cstdint>

#ifdef __CUDACC__
#define HDLAB_MHC_HOST_DEVICE __host__ __device__
#else
#define HDLAB_MHC_HOST_DEVICE
#endif

namespace hdlab::executor::detail {

// bias [n^2+2n], scale [3] (pre, post, res); res: an [n, n] scratch.
HDLAB_MHC_HOST_DEVICE inline void mhc_token_coefficients(const float* g, const float* bias, const float* scale,
                                                         std::int64_t n, std::int64_t iters, float* res, float* alpha,
                                                         float* beta) {
  for (std::int64_t i = 0; i < n; ++i) {
    alpha[i * (1 + n)] = 1.0f / (1.0f + expf(-(scale[0] * g[i] + bias[i])));
    beta[i] = 2.0f / (1.0f + expf(-(scale[1] * g[n + i] + bias[n + i])));
  }
  // exp of the mixing logits: subtracting the largest leaves the projection unchanged (the
  // first row division cancels it) and keeps exp finite.
  float top = -INFINITY;
  for (std::int64_t k = 0; k < n * n; ++k) {
    res[k] = scale[2] * g[2 * n + k] + bias[2 * n + k];
    top = fmaxf(top, res[k]);
  }
  for (std::int64_t k = 0; k < n * n; ++k) res[k] = expf(res[k] - top);
  for (std::int64_t it = 0; it < iters; ++it) {  // Sinkhorn-Knopp: rows, then columns
    for (std::int64_t r = 0; r < n; ++r) {
      float sum = 0.0f;
      for (std::int64_t c = 0; c < n; ++c) sum += res[r * n + c];
      for (std::int64_t c = 0; c < n; ++c) res[r * n + c] /= sum;
    }
    for (std::int64_t c = 0; c < n; ++c) {
      float sum = 0.0f;
      for (std::int64_t r = 0; r < n; ++r) sum += res[r * n + c];
      for (std::int64_t r = 0; r < n; ++r) res[r * n + c] /= sum;
    }
  }
  // Stream j of the carried state is sum_i H_res[j, i] h_i: alpha[i, 1 + j] = H_res[j, i].
  for (std::int64_t j = 0; j < n; ++j)
    for (std::int64_t i = 0; i < n; ++i) alpha[i * (1 + n) + 1 + j] = res[j * n + i];
}

}  // namespace hdlab::executor::detail
