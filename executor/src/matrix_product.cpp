// Matrix products through Backend::gemm (see matrix_product.hpp).
#include "matrix_product.hpp"

#include <algorithm>
#include <vector>

namespace hdlab::executor {

namespace {

constexpr std::int64_t kMaxInner = std::int64_t{1} << 16;

class GemmProduct final : public MatrixProduct {
 public:
  GemmProduct(Backend& backend, ScalarType type, std::int64_t m, std::int64_t n, std::int64_t k)
      : backend_(backend),
        type_(type),
        k_(k),
        a_(backend.allocate({m, k}, type)),
        b_(backend.allocate({n, k}, type)),
        c_(backend.allocate({m, n}, type)) {
    backend.upload(a_, std::vector<float>(static_cast<std::size_t>(m * k), 0.5f));
    backend.upload(b_, std::vector<float>(static_cast<std::size_t>(n * k), 0.25f));
  }
  void run() override { backend_.gemm(a_, false, b_, true, c_); }
  bool check() override {
    backend_.fill_zero(c_);
    run();
    backend_.synchronize();
    const float exact = static_cast<float>(k_) / 8;
    const float want = type_ == ScalarType::bf16 ? round_to_bf16(exact) : exact;
    const std::vector<float> c = backend_.download_f32(c_);
    return std::all_of(c.begin(), c.end(), [&](float x) { return x == want; });
  }

 private:
  Backend& backend_;
  ScalarType type_;
  std::int64_t k_;
  Tensor a_, b_, c_;
};

}  // namespace

const char* to_string(MatrixPrecision p) {
  switch (p) {
    case MatrixPrecision::fp32: return "fp32";
    case MatrixPrecision::bf16: return "bf16";
    case MatrixPrecision::fp16: return "fp16";
  }
  return "fp32";
}

void check_matrix_product_shape(std::int64_t m, std::int64_t n, std::int64_t k) {
  if (m < 1 || n < 1 || k < 1 || k > kMaxInner)
    throw BackendError("matrix product: m, n, k must be at least 1 and k at most " + std::to_string(kMaxInner) +
                       ", got " + std::to_string(m) + ", " + std::to_string(n) + ", " + std::to_string(k));
}

bool generic_matrix_precision(const Backend& backend, MatrixPrecision precision) {
  if (precision == MatrixPrecision::fp32) return backend.supports(BackendOp::gemm, ScalarType::f32);
  if (precision == MatrixPrecision::bf16) return backend.supports(BackendOp::gemm, ScalarType::bf16);
  return false;  // no backend holds fp16 tensors
}

std::unique_ptr<MatrixProduct> make_generic_matrix_product(Backend& backend, MatrixPrecision precision,
                                                           std::int64_t m, std::int64_t n, std::int64_t k) {
  check_matrix_product_shape(m, n, k);
  if (!generic_matrix_precision(backend, precision))
    throw BackendError(backend.name() + " backend has no " + to_string(precision) + " matrix product" +
                       (backend.name() == "cpu" ? " (it computes in fp32)" : ""));
  const ScalarType type = precision == MatrixPrecision::bf16 ? ScalarType::bf16 : ScalarType::f32;
  return std::make_unique<GemmProduct>(backend, type, m, n, k);
}

}  // namespace hdlab::executor
