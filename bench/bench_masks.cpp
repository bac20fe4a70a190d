// Speed of model::visible_tiles, the exact tile counts the cost model asks for at every
// evaluation with a new sequence length: per-call microseconds for representative masks
// (baseline causal, HD n=4 full / intra / local in interleaved and stream-major order,
// PHD K=3 CSWA in [origins | hidden] order) at 128x128 and 64x64 tiles. The counts are
// printed too, so two builds can be compared for identical results.
//
// usage: bench_masks [SECONDS_PER_CASE]   (default 0.2)
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "hdlab/model/mask.hpp"

using namespace hdlab::model;

namespace {

struct Case {
  std::string name;
  MaskSpec mask;
  Layout layout;
};

MaskSpec make(MaskSpec::Kind kind, std::int64_t tokens, std::int64_t copies, std::int64_t window = 0) {
  MaskSpec m;
  m.kind = kind;
  m.tokens = tokens;
  m.copies = copies;
  m.window = window;
  return m;
}

MaskSpec phd_cswa(std::int64_t tokens, std::int64_t K, std::int64_t W, std::int64_t C) {
  MaskSpec m = make(MaskSpec::Kind::phd, tokens, K);
  m.phd_variant = PhdVariant::cswa;
  m.phd_W = W;
  m.phd_C = C;
  return m;
}

std::vector<Case> cases() {
  using K = MaskSpec::Kind;
  std::vector<Case> out = {
      {"baseline causal 4k", make(K::causal, 4096, 1), Layout::interleaved},
      {"baseline causal 32k", make(K::causal, 32768, 1), Layout::interleaved},
  };
  for (Layout l : {Layout::interleaved, Layout::stream_major}) {
    const std::string suffix = std::string(" ") + to_string(l);
    out.push_back({"HD n=4 full 4096" + suffix, make(K::causal, 4096, 4), l});
    out.push_back({"HD n=4 intra 4096" + suffix, make(K::intra, 4096, 4), l});
    out.push_back({"HD n=4 local(1024) 4096" + suffix, make(K::sliding, 4096, 4, 1024), l});
  }
  MaskSpec mirror = make(K::causal, 4096, 4);
  mirror.final_copy_queries_only = true;
  out.push_back({"HD n=4 full 4096 mirror rows", mirror, Layout::interleaved});
  out.push_back({"PHD K=3 CSWA(W=16,C=32) 4096 phd_split", phd_cswa(4096, 3, 16, 32), Layout::phd_split});
  return out;
}

// Median per-call microseconds over batches of calls lasting >= 1 ms each, for `seconds`.
double per_call_us(const Case& c, std::int64_t B, double seconds, TileCount& result) {
  using clock = std::chrono::steady_clock;
  result = visible_tiles(c.mask, c.layout, B, B);  // warm-up
  std::vector<double> samples;
  const auto start = clock::now();
  long calls_per_batch = 1;
  while (std::chrono::duration<double>(clock::now() - start).count() < seconds || samples.size() < 5) {
    const auto t0 = clock::now();
    std::int64_t sink = 0;
    for (long i = 0; i < calls_per_batch; ++i) sink += visible_tiles(c.mask, c.layout, B, B).executed_pairs;
    const double us = std::chrono::duration<double, std::micro>(clock::now() - t0).count();
    if (sink != result.executed_pairs * calls_per_batch) std::abort();  // keeps the calls
    if (us < 1000) {
      calls_per_batch *= 2;
      continue;
    }
    samples.push_back(us / static_cast<double>(calls_per_batch));
  }
  std::sort(samples.begin(), samples.end());
  return samples[samples.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  const double seconds = argc > 1 ? std::atof(argv[1]) : 0.2;
  std::printf("%-44s %5s %10s   %s\n", "mask", "tile", "us/call", "visible full total executed_pairs");
  for (const Case& c : cases())
    for (std::int64_t B : {128, 64}) {
      TileCount t;
      const double us = per_call_us(c, B, seconds, t);
      std::printf("%-44s %5lld %10.3f   %lld %lld %lld %lld\n", c.name.c_str(), static_cast<long long>(B), us,
                  static_cast<long long>(t.visible), static_cast<long long>(t.full), static_cast<long long>(t.total),
                  static_cast<long long>(t.executed_pairs));
    }
  return 0;
}
