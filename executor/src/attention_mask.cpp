// Tile classification of an attention call. Bounds decide most tiles at once (a tile of
// keys entirely after a tile of queries, a sliding window out of reach, streams that
// never meet, ...); what they leave open is evaluated pair by pair with model::visible,
// and the pair count then settles the class exactly.
#include "hdlab/executor/attention_mask.hpp"

#include <algorithm>
#include <atomic>
#include <bit>
#include <limits>
#include <stdexcept>
#include <string>

#include "hdlab/executor/backend.hpp"

namespace hdlab::executor {

namespace {

using model::MaskSpec;

// What the rows of one tile have in common, in logical terms.
struct TileSummary {
  std::int64_t min_pos = std::numeric_limits<std::int64_t>::max();
  std::int64_t max_pos = std::numeric_limits<std::int64_t>::min();
  std::int64_t min_token = std::numeric_limits<std::int64_t>::max();
  std::int64_t max_token = std::numeric_limits<std::int64_t>::min();
  std::uint64_t copy_bits = 0;  // bit k: copy k present (all ones when copies > 64)
  bool any_origin = false;      // copy 0 present (PHD origins)
  bool any_hidden = false;      // copy >= 1 present
  std::int64_t min_rank = std::numeric_limits<std::int64_t>::max();  // PHD hidden rank, hidden rows only
  std::int64_t max_rank = std::numeric_limits<std::int64_t>::min();
};

std::vector<TileSummary> summarize(const std::vector<std::int64_t>& positions, std::int64_t tile,
                                   const MaskSpec& spec) {
  const std::int64_t rows = static_cast<std::int64_t>(positions.size());
  const std::int64_t copies = spec.copies;
  std::vector<TileSummary> out(static_cast<std::size_t>((rows + tile - 1) / tile));
  for (std::int64_t r = 0; r < rows; ++r) {
    TileSummary& s = out[static_cast<std::size_t>(r / tile)];
    const std::int64_t t = positions[static_cast<std::size_t>(r)];
    const std::int64_t token = t / copies, copy = t % copies;
    s.min_pos = std::min(s.min_pos, t);
    s.max_pos = std::max(s.max_pos, t);
    s.min_token = std::min(s.min_token, token);
    s.max_token = std::max(s.max_token, token);
    s.copy_bits |= copies <= 64 ? (std::uint64_t{1} << copy) : ~std::uint64_t{0};
    if (copy == 0) {
      s.any_origin = true;
    } else {
      s.any_hidden = true;
      const std::int64_t rank = token * (copies - 1) + (copy - 1);
      s.min_rank = std::min(s.min_rank, rank);
      s.max_rank = std::max(s.max_rank, rank);
    }
  }
  return out;
}

enum class Bound { none, all, unknown };

// Conservative: `none` only if no pair of the two tiles can be visible, `all` only if
// every pair is. Every mask kind is causal in logical positions (t' <= t).
Bound bound_tile(const MaskSpec& m, const TileSummary& q, const TileSummary& k) {
  if (q.max_pos < k.min_pos) return Bound::none;
  const bool causal_all = k.max_pos <= q.min_pos;
  switch (m.kind) {
    case MaskSpec::Kind::causal:
      if (m.chunk > 0) {  // chunked: keys of an earlier chunk than every query's are out of reach
        if (k.max_token / m.chunk < q.min_token / m.chunk) return Bound::none;
        return causal_all && k.min_token / m.chunk == q.max_token / m.chunk ? Bound::all : Bound::unknown;
      }
      return causal_all ? Bound::all : Bound::unknown;
    case MaskSpec::Kind::sliding:
      if (k.max_pos <= q.min_pos - m.window) return Bound::none;
      return causal_all && k.min_pos > q.max_pos - m.window ? Bound::all : Bound::unknown;
    case MaskSpec::Kind::intra:
      if ((q.copy_bits & k.copy_bits) == 0) return Bound::none;
      if (causal_all && m.copies <= 64 && q.copy_bits == k.copy_bits && std::has_single_bit(q.copy_bits))
        return Bound::all;
      return Bound::unknown;
    case MaskSpec::Kind::phd: {
      // Origin keys (j' = 0) are seen by every query of the same or a later token.
      if (!k.any_hidden && k.max_token <= q.min_token) return Bound::all;
      if (!k.any_origin) {
        // Hidden keys: only hidden queries of the same token, or within the window.
        if (!q.any_hidden) return Bound::none;
        const bool tokens_apart = q.max_token < k.min_token || k.max_token < q.min_token;
        const bool window_apart = m.phd_variant == model::PhdVariant::plain || q.max_rank <= k.min_rank ||
                                  q.min_rank - k.max_rank > m.phd_W;
        if (tokens_apart && window_apart) return Bound::none;
      }
      return Bound::unknown;
    }
  }
  return Bound::unknown;
}

std::atomic<std::uint64_t> next_plan_id{1};

}  // namespace

AttentionMask AttentionMask::prefill(const model::MaskSpec& spec, model::Layout layout) {
  AttentionMask m;
  m.spec = spec;
  m.key_positions = model::physical_to_logical(spec.tokens, spec.copies, layout);
  if (spec.final_copy_queries_only) {
    m.query_positions.resize(static_cast<std::size_t>(spec.tokens));
    for (std::int64_t i = 0; i < spec.tokens; ++i)
      m.query_positions[static_cast<std::size_t>(i)] = i * spec.copies + spec.copies - 1;
  } else {
    m.query_positions = m.key_positions;
  }
  return m;
}

AttentionMask AttentionMask::decode(const model::MaskSpec& spec, std::vector<std::int64_t> query_positions,
                                    std::vector<std::int64_t> key_positions) {
  AttentionMask m;
  m.spec = spec;
  m.query_positions = std::move(query_positions);
  m.key_positions = std::move(key_positions);
  return m;
}

bool AttentionMask::visible(std::int64_t r, std::int64_t c) const {
  return model::visible(spec, query_positions[static_cast<std::size_t>(r)], key_positions[static_cast<std::size_t>(c)]);
}

TilePlan::TilePlan(const AttentionMask& mask)
    : query_rows_(mask.query_rows()),
      key_rows_(mask.key_rows()),
      q_tiles_((query_rows_ + kTileQ - 1) / kTileQ),
      k_tiles_((key_rows_ + kTileK - 1) / kTileK),
      id_(next_plan_id.fetch_add(1)) {
  if (mask.spec.copies < 1) throw BackendError("attention mask: copies must be >= 1");
  // model::visible() is false outside [0, tokens*copies): a decode step whose MaskSpec
  // still has the old token count would silently see nothing.
  const std::int64_t limit = mask.spec.positions();
  for (auto p : mask.query_positions)
    if (p < 0 || p >= limit)
      throw BackendError("attention mask: query position " + std::to_string(p) + " outside [0, " +
                         std::to_string(limit) + ") (spec.tokens x spec.copies)");
  for (auto p : mask.key_positions)
    if (p < 0 || p >= limit)
      throw BackendError("attention mask: key position " + std::to_string(p) + " outside [0, " +
                         std::to_string(limit) + ") (spec.tokens x spec.copies)");
  const auto qs = summarize(mask.query_positions, kTileQ, mask.spec);
  const auto ks = summarize(mask.key_positions, kTileK, mask.spec);
  classes_.assign(static_cast<std::size_t>(q_tiles_ * k_tiles_), TileClass::skip);
  partial_index_.assign(classes_.size(), -1);
  std::vector<std::uint64_t> words(kTileQ);
  for (std::int64_t qt = 0; qt < q_tiles_; ++qt) {
    const std::int64_t r0 = qt * kTileQ, rows = std::min(kTileQ, query_rows_ - r0);
    for (std::int64_t kt = 0; kt < k_tiles_; ++kt) {
      const std::int64_t c0 = kt * kTileK, cols = std::min(kTileK, key_rows_ - c0);
      const std::size_t at = static_cast<std::size_t>(qt * k_tiles_ + kt);
      Bound b = bound_tile(mask.spec, qs[static_cast<std::size_t>(qt)], ks[static_cast<std::size_t>(kt)]);
      std::int64_t seen = 0;
      if (b == Bound::unknown) {
        std::fill(words.begin(), words.end(), 0);
        for (std::int64_t r = 0; r < rows; ++r)
          for (std::int64_t c = 0; c < cols; ++c)
            if (mask.visible(r0 + r, c0 + c)) words[static_cast<std::size_t>(r)] |= std::uint64_t{1} << c;
        for (auto w : words) seen += std::popcount(w);
        b = seen == 0 ? Bound::none : seen == rows * cols ? Bound::all : Bound::unknown;
      }
      if (b == Bound::none) continue;
      ++visible_tiles_;
      executed_pairs_ += rows * cols;
      if (b == Bound::all) {
        classes_[at] = TileClass::full;
        ++full_tiles_;
        visible_pairs_ += rows * cols;
        continue;
      }
      classes_[at] = TileClass::partial;
      if (bits_.size() / kTileQ >= static_cast<std::size_t>(std::numeric_limits<std::int32_t>::max()))
        throw BackendError("attention mask: too many partial tiles");
      partial_index_[at] = static_cast<std::int32_t>(bits_.size() / kTileQ);
      bits_.insert(bits_.end(), words.begin(), words.end());
      visible_pairs_ += seen;
    }
  }
}

const std::uint64_t* TilePlan::partial_bits(std::int64_t qt, std::int64_t kt) const {
  const std::int32_t p = partial_index_[static_cast<std::size_t>(qt * k_tiles_ + kt)];
  return p < 0 ? nullptr : bits_.data() + static_cast<std::size_t>(p) * kTileQ;
}

bool TilePlan::visible(std::int64_t r, std::int64_t c) const {
  const std::int64_t qt = r / kTileQ, kt = c / kTileK;
  switch (at(qt, kt)) {
    case TileClass::skip: return false;
    case TileClass::full: return true;
    case TileClass::partial: break;
  }
  return (partial_bits(qt, kt)[r % kTileQ] >> (c % kTileK)) & 1u;
}

}  // namespace hdlab::executor
