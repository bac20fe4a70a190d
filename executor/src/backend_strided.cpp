// The argument checks of the strided-batch ops (gemm_batched, copy_strided) before a
// backend sees them: every matrix of the batch inside its tensor, and the written ones
// never sharing an element.
#include <algorithm>

#include "backend_checks.hpp"

namespace hdlab::executor {

using namespace checks;

namespace {

std::string describe(const char* what, StridedBatch s) {
  return std::string(what) + " (offset " + std::to_string(s.offset) + ", row stride " + std::to_string(s.row_stride) +
         ", batch stride " + std::to_string(s.batch_stride) + ")";
}

// `batch` matrices of rows x cols stored as `s` lie inside `t` (non-negative strides, rows
// not wider than their stride).
void require_inside(const Tensor& t, StridedBatch s, std::int64_t batch, std::int64_t rows, std::int64_t cols,
                    const char* op, const char* what) {
  require(s.offset >= 0 && s.row_stride >= 0 && s.batch_stride >= 0, op, describe(what, s) + ": negative");
  require(rows <= 1 || s.row_stride >= cols, op,
          describe(what, s) + ": rows of " + std::to_string(cols) + " elements overlap");
  const std::int64_t last = s.offset + (batch - 1) * s.batch_stride + (rows - 1) * s.row_stride + cols - 1;
  require(last < t.numel(), op, describe(what, s) + ": " + std::to_string(batch) + " x [" + std::to_string(rows) +
                                    ", " + std::to_string(cols) + "] reach element " + std::to_string(last) +
                                    " of " + shape_of(t));
}

// The written matrices share no element: strides nested (the finer one's extent fits in
// the coarser one's step, rows inside the finer step), a sufficient condition that every
// layout the runner writes (heads inside rows, rows of one block) meets.
void require_distinct(StridedBatch s, std::int64_t batch, std::int64_t rows, std::int64_t cols, const char* op,
                      const char* what) {
  struct Axis {
    std::int64_t stride, extent;
  };
  Axis fine{s.row_stride, rows}, coarse{s.batch_stride, batch};
  if (fine.extent <= 1 || (coarse.extent > 1 && coarse.stride < fine.stride)) std::swap(fine, coarse);
  const bool fine_ok = fine.extent <= 1 || fine.stride >= cols;
  const bool coarse_ok = coarse.extent <= 1 || coarse.stride >= (fine.extent <= 1 ? cols : fine.stride * fine.extent);
  require(fine_ok && coarse_ok, op, describe(what, s) + ": the written matrices overlap");
}

}  // namespace

void Backend::gemm_batched(const Tensor& a, StridedBatch av, bool trans_a, const Tensor& b, StridedBatch bv,
                           bool trans_b, const Tensor& c, StridedBatch cv, std::int64_t batch, std::int64_t m,
                           std::int64_t n, std::int64_t k) {
  const char* op = "gemm_batched";
  for (const Tensor* t : {&a, &b, &c}) check_owned(*t, op);
  require(a.type() == b.type() && b.type() == c.type(), op, "a, b and c must share one element type");
  require_float(a, op, "a");
  check_supported(BackendOp::gemm_batched, a.type());
  require(batch >= 0 && m >= 0 && n >= 0 && k >= 0, op, "negative batch or extent");
  if (batch == 0 || m == 0 || n == 0) return;
  require(k > 0, op, "inner dimension 0");
  require_inside(a, av, batch, trans_a ? k : m, trans_a ? m : k, op, "a");
  require_inside(b, bv, batch, trans_b ? n : k, trans_b ? k : n, op, "b");
  require_inside(c, cv, batch, m, n, op, "c");
  require_distinct(cv, batch, m, n, op, "c");
  require(!c.overlaps(a) && !c.overlaps(b), op, "c overlaps an input");
  gemm_batched_impl(a, av, trans_a, b, bv, trans_b, c, cv, batch, m, n, k);
}

void Backend::copy_strided(const Tensor& src, StridedBatch sv, const Tensor& dst, StridedBatch dv, std::int64_t batch,
                           std::int64_t rows, std::int64_t cols) {
  const char* op = "copy_strided";
  check_owned(src, op);
  check_owned(dst, op);
  require(src.type() == dst.type(), op, "src and dst must share one element type");
  require_float(src, op, "src");
  check_supported(BackendOp::copy_strided, src.type());
  require(batch >= 0 && rows >= 0 && cols >= 0, op, "negative batch or extent");
  if (batch == 0 || rows == 0 || cols == 0) return;
  require_inside(src, sv, batch, rows, cols, op, "src");
  require_inside(dst, dv, batch, rows, cols, op, "dst");
  require_distinct(dv, batch, rows, cols, op, "dst");
  require(!dst.overlaps(src), op, "src and dst overlap");
  copy_strided_impl(src, sv, dst, dv, batch, rows, cols);
}

}  // namespace hdlab::executor
