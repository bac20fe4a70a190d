#pragma once
// Remembered kernel-model answers (kernel_models.cpp; used by kernel_time.cpp).
//
// The GEMM model's tile and split-K search and decode attention's grouped-kernel time and
// envelope across the kernel switch cost more than the rest of an evaluation, and a sweep
// or a serving matrix asks for the same products and the same decode steps again and again
// (the same weights, batches and contexts, evaluation after evaluation). Small per-thread
// tables remember the latest answers. Their entries are short: the question's numbers bit
// for bit and a key naming the kernel model's parameters and SM count (memo_key), which
// the caller looks up once, where it picks the kernel (make_roofline), not on every call.
// So a hit answers only exactly what was asked and returns what the model would.
// The public forms in kernel_models.hpp (fits, kernel tables: each kernel and shape asked
// once) search without a memo.
#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <memory>

#include "hdlab/simulator/kernel_models.hpp"

namespace hdlab::simulator {

// A number naming one kernel model's parameters and an SM count: the same parameters get
// the same key on one thread while they stay among its few latest, and a key is never
// given to other parameters (keys are drawn from one process-wide count, never reused),
// so a key held past that is still right, only slower. Never 0.
std::uint64_t memo_key(const GemmKernel& g, double sms);
std::uint64_t memo_key(const DecodeAttentionKernel& a, double sms);

// grouped_gemm_seconds and decode_attention_seconds, remembered, with the kernel's
// memo_key(g, sms) given (0: looked up here, for a roofline built by hand).
double grouped_gemm_seconds(const GemmKernel& g, double sms, std::uint64_t key, const GemmShape& s, double groups);
double decode_attention_seconds(const DecodeAttentionKernel& a, double sms, std::uint64_t key,
                                const DecodeAttentionShape& s);

namespace memo_detail {

inline std::uint64_t bits(double x) { return std::bit_cast<std::uint64_t>(x); }

// A table of `Sets` sets of two entries, each a key of `Words` 64-bit words (the kernel's
// memo_key first, so an unused all-zero entry never matches) and one answer. Two ways per
// set: a question whose set another one of the same evaluation also hashes to keeps both;
// the newer answer takes the first way, the one it pushes out the second.
template <std::size_t Words, std::size_t Sets>
class Memo {
  static_assert(std::has_single_bit(Sets) && Sets > 1, "Sets: a power of two");

 public:
  using Key = std::array<std::uint64_t, Words>;

  template <class Compute>
  double get(const Key& key, Compute&& compute) {
    // The words rotated apart (so a shape and its transpose differ), then Fibonacci
    // hashing: the product's top bits depend on every bit of h (a double's varying bits
    // are its high ones, the exponent and the top of the mantissa).
    std::uint64_t h = 0;
    for (std::size_t i = 0; i < Words; ++i) h ^= std::rotl(key[i], static_cast<int>(17 * i % 64));
    Set& set = (*sets_)[(h * 0x9e3779b97f4a7c15ULL) >> (64 - std::countr_zero(Sets))];
    if (same(set[0].key, key)) return set[0].value;
    if (same(set[1].key, key)) return set[1].value;
    set[1] = set[0];
    set[0] = Entry{key, compute()};
    return set[0].value;
  }

 private:
  struct Entry {
    Key key{};
    double value = 0;
  };
  using Set = std::array<Entry, 2>;
  // Word by word (std::array's == may become a call to memcmp).
  static bool same(const Key& a, const Key& b) {
    for (std::size_t i = 0; i < Words; ++i)
      if (a[i] != b[i]) return false;
    return true;
  }
  std::unique_ptr<std::array<Set, Sets>> sets_ = std::make_unique<std::array<Set, Sets>>();
};

}  // namespace memo_detail
}  // namespace hdlab::simulator
