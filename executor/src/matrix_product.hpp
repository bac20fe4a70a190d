#pragma once
// Matrix products of the precisions a backend's own tensors hold (executor/backends.hpp:
// MatrixProduct), through Backend::gemm: the CPU backend's fp32 product, and what a build
// without CUDA offers. The CUDA module makes its own (fp16 has no tensor type).
#include <cstdint>
#include <memory>

#include "hdlab/executor/backends.hpp"

namespace hdlab::executor {

// Throws BackendError unless 1 <= m, n and 1 <= k <= 2^16 (k/8 beyond fp16 above that).
void check_matrix_product_shape(std::int64_t m, std::int64_t n, std::int64_t k);
// Whether `precision` has a tensor type this backend multiplies (fp32: f32, bf16: bf16).
bool generic_matrix_precision(const Backend& backend, MatrixPrecision precision);
// Throws BackendError where generic_matrix_precision is false.
std::unique_ptr<MatrixProduct> make_generic_matrix_product(Backend& backend, MatrixPrecision precision,
                                                           std::int64_t m, std::int64_t n, std::int64_t k);

}  // namespace hdlab::executor
