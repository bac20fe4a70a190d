// The collector's power-law MoE routing (kerneldb.hpp's power_law_rank_load): the load of
// the expert-parallel rank aiconfigurator's moe_perf rows time.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <exception>
#include <map>
#include <mutex>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "hdlab/calibration/kerneldb.hpp"

namespace hdlab::calibration {

std::optional<double> power_law_alpha(const std::string& distribution) {
  const std::string prefix = "power_law_";
  if (distribution.rfind(prefix, 0) != 0) return std::nullopt;
  try {
    std::size_t used = 0;
    const double alpha = std::stod(distribution.substr(prefix.size()), &used);
    if (used + prefix.size() != distribution.size() || !(alpha > 0) || alpha == 1) return std::nullopt;
    return alpha;
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

namespace {

// One draw of the collector's expert loads (whole copies per expert, in expert order): E
// samples of a power law of exponent alpha on [1, 0.8 T] (on [0.01, 2] when the T k
// copies are no more than the experts), scaled to T k copies and rounded; the rounding's
// surplus or shortfall is made up one copy at a time from the most loaded experts down
// (a shortfall from the least loaded up, skipping empty ones), as the collector does. An
// expert takes at most T of the copies on the rank (the router picks it once a token).
std::vector<double> power_law_draw(std::mt19937_64& rng, double tokens, double experts, double topk, double alpha) {
  const bool many = tokens * topk > experts;
  const double lo = many ? 1 : 0.01, hi = many ? 0.8 * tokens : 2;
  const double a = std::pow(lo, 1 - alpha), b = std::pow(hi, 1 - alpha);
  std::vector<double> load(static_cast<std::size_t>(experts));
  double sum = 0;
  for (double& x : load) {
    const double u = static_cast<double>(rng() >> 11) * 0x1.0p-53;  // uniform on [0, 1)
    x = std::pow((b - a) * u + a, 1 / (1 - alpha));                   // inverse CDF
    sum += x;
  }
  const double copies = tokens * topk;
  double rounded = 0;
  for (double& x : load) rounded += (x = std::round(x * copies / sum));
  // Ties (most loads round to 0 when the copies are few) fall in no particular order: the
  // measured rows say the rank's experts were not those of the lowest indices (T 1, top-22
  // of 512 over ep 16 takes 96 us on the H100, where 22 experts' weights would need 830 us
  // at the datasheet bandwidth), so they are shuffled before the sort.
  std::vector<std::size_t> order(load.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  for (std::size_t i = order.size(); i > 1; --i) std::swap(order[i - 1], order[rng() % i]);
  std::stable_sort(order.begin(), order.end(), [&](std::size_t i, std::size_t j) { return load[i] > load[j]; });
  const std::size_t n = order.size();
  for (std::size_t i = 0; rounded < copies; ++i, ++rounded) load[order[i % n]] += 1;
  for (std::size_t i = 0; rounded > copies; ++i, --rounded) {
    double& x = load[order[n - 1 - i % n]];
    if (x > 0) x -= 1;
    else load[order[0]] -= 1;
  }
  return load;
}

}  // namespace

RankLoad power_law_rank_load(double tokens, double experts, double topk, double ep, double alpha) {
  static std::mutex mutex;
  static std::map<std::array<double, 5>, RankLoad> cache;
  const std::array<double, 5> key{tokens, experts, topk, ep, alpha};
  {
    std::lock_guard<std::mutex> lock(mutex);
    if (auto it = cache.find(key); it != cache.end()) return it->second;
  }
  // Seeded by the question, so an answer never depends on which rows were asked before.
  std::seed_seq seed{static_cast<std::uint64_t>(tokens), static_cast<std::uint64_t>(experts),
                     static_cast<std::uint64_t>(topk), static_cast<std::uint64_t>(ep),
                     static_cast<std::uint64_t>(std::lround(alpha * 1000))};
  std::mt19937_64 rng(seed);
  const std::size_t groups = static_cast<std::size_t>(std::max(1.0, ep));
  const std::size_t per_group = static_cast<std::size_t>(experts) / groups;
  RankLoad mean;
  for (int draw = 0; draw < kPowerLawDraws; ++draw) {
    const std::vector<double> load = power_law_draw(rng, tokens, experts, topk, alpha);
    double best = -1, hit = 0;
    for (std::size_t g = 0; g < groups; ++g) {
      double copies = 0, nonzero = 0;
      for (std::size_t i = g * per_group; i < (g + 1) * per_group && i < load.size(); ++i) {
        copies += std::min(load[i], tokens);  // the router picks an expert at most once a token
        nonzero += load[i] > 0 ? 1 : 0;
      }
      if (copies > best) best = copies, hit = nonzero;
    }
    mean.copies += best / kPowerLawDraws;
    mean.experts_hit += hit / kPowerLawDraws;
  }
  std::lock_guard<std::mutex> lock(mutex);
  cache.emplace(key, mean);
  return mean;
}

}  // namespace hdlab::calibration
