// Attention masks: the visibility predicate of every layer kind, the physical layouts as
// permutations, closed-form pair counts, materialisation and brute-force counts, and the
// mask each layer of a design uses. Tile counts live in mask_tiles.cpp.
#include "hdlab/model/mask.hpp"

#include <algorithm>
#include <string>

#include "hdlab/model/error.hpp"
#include "hdlab/model/schedule.hpp"

namespace hdlab::model {

namespace {

std::string num(std::int64_t v) { return std::to_string(v); }

// Token i, copy k of logical position t = i*copies + k.
struct Cell {
  std::int64_t token;
  std::int64_t copy;
};
Cell cell_of(std::int64_t t, std::int64_t copies) { return {t / copies, t % copies}; }

// PHD: hidden rank r(i, j) = i*(K-1) + (j-1) of a hidden copy j >= 1.
std::int64_t hidden_rank(Cell c, std::int64_t K) { return c.token * (K - 1) + (c.copy - 1); }

bool phd_visible(const MaskSpec& m, Cell q, Cell k) {
  if (k.copy == 0) return k.token <= q.token;  // earlier origins, and a token's own origin
  if (q.copy == 0) return false;               // origin queries never see hidden keys
  if (k.token == q.token && k.copy <= q.copy) return true;
  if (m.phd_variant == PhdVariant::plain) return false;
  const std::int64_t d = hidden_rank(q, m.copies) - hidden_rank(k, m.copies);
  if (d <= 0 || d > m.phd_W) return false;
  return m.phd_variant != PhdVariant::cswa || k.token / m.phd_C == q.token / m.phd_C;
}

// Sum_{t=0}^{n-1} min(t, cap): pairs at distance 1..cap within a run of n positions.
std::int64_t capped_distance_pairs(std::int64_t n, std::int64_t cap) {
  const std::int64_t a = std::min(n, cap + 1);
  return a * (a - 1) / 2 + (n - a) * cap;
}

// PHD-SWA/CSWA extra pairs: a hidden query sees hidden keys of *earlier tokens* at rank
// distance 1..W. Within a run of `tokens` tokens (the whole sequence for SWA, one chunk for
// CSWA): all hidden pairs at distance 1..W minus those inside one token.
std::int64_t phd_window_pairs(std::int64_t tokens, std::int64_t K, std::int64_t W) {
  const std::int64_t D = std::min(W, K - 2);  // largest same-token distance within the window
  const std::int64_t same_token = D > 0 ? D * (K - 1) - D * (D + 1) / 2 : 0;
  return capped_distance_pairs(tokens * (K - 1), W) - tokens * same_token;
}

// Same, for final-copy queries only (j = K-1): the query of token i (local index within the
// run) sees min(i*(K-1), W-(K-2)) hidden keys of earlier tokens.
std::int64_t phd_window_pairs_final(std::int64_t tokens, std::int64_t K, std::int64_t W) {
  const std::int64_t cap = W - (K - 2);
  if (cap <= 0 || K < 2) return 0;
  const std::int64_t c = K - 1;
  const std::int64_t below = std::min(tokens, (cap + c - 1) / c);  // tokens with i*c < cap
  return c * below * (below - 1) / 2 + (tokens - below) * cap;
}

std::int64_t phd_pairs(const MaskSpec& m) {
  const std::int64_t L = m.tokens, K = m.copies;
  const bool final_only = m.final_copy_queries_only;
  // Plain part: every query sees the origins up to its token, a hidden query (i, j) also
  // its own token's copies 1..j.
  std::int64_t pairs = final_only ? L * (L + 1) / 2 + L * (K - 1) : K * L * (L + 1) / 2 + L * K * (K - 1) / 2;
  if (m.phd_variant == PhdVariant::plain || K < 2) return pairs;
  auto window = [&](std::int64_t tokens) {
    return final_only ? phd_window_pairs_final(tokens, K, m.phd_W) : phd_window_pairs(tokens, K, m.phd_W);
  };
  if (m.phd_variant == PhdVariant::swa) return pairs + window(L);
  return pairs + (L / m.phd_C) * window(m.phd_C) + window(L % m.phd_C);
}

std::int64_t sliding_pairs(const MaskSpec& m) {
  const std::int64_t w = m.window, n = m.copies;
  if (m.final_copy_queries_only) {
    // Query i (t = i*n + n-1) sees min((i+1)*n, w) keys; (i+1)*n <= w for i < floor(w/n).
    const std::int64_t below = std::min(m.tokens, w / n);
    return n * below * (below + 1) / 2 + (m.tokens - below) * w;
  }
  const std::int64_t N = m.positions(), a = std::min(N, w);
  return a * (a + 1) / 2 + (N - a) * w;
}

void check_materializable(const MaskSpec& m) {
  validate(m);
  if (m.positions() > max_materialize_positions)
    throw ConfigError("/mask/tokens", "a mask of " + num(m.positions()) + " positions (" + num(m.tokens) +
                                          " tokens x " + num(m.copies) + " copies) is too large to materialise (at most " +
                                          num(max_materialize_positions) + ")");
}

// Logical position of physical query row r: the layout's order, or for final-copy-only
// masks the final copy of token r.
std::int64_t logical_query(const MaskSpec& m, Layout l, std::int64_t r) {
  if (m.final_copy_queries_only) return r * m.copies + (m.copies - 1);
  return logical_of_physical(m.tokens, m.copies, l, r);
}

}  // namespace

const char* to_string(MaskSpec::Kind k) {
  switch (k) {
    case MaskSpec::Kind::causal: return "causal";
    case MaskSpec::Kind::sliding: return "sliding";
    case MaskSpec::Kind::intra: return "intra";
    case MaskSpec::Kind::phd: return "phd";
  }
  return "?";
}

const char* to_string(Layout l) {
  switch (l) {
    case Layout::interleaved: return "interleaved";
    case Layout::stream_major: return "stream_major";
    case Layout::phd_split: return "phd_split";
  }
  return "?";
}

Layout layout_from_string(const std::string& s) {
  if (s == "interleaved") return Layout::interleaved;
  if (s == "stream_major") return Layout::stream_major;
  if (s == "phd_split") return Layout::phd_split;
  throw ConfigError("", "unknown layout \"" + s + "\": expected interleaved, stream_major or phd_split");
}

void validate(const MaskSpec& m) {
  if (m.tokens < 1) throw ConfigError("/mask/tokens", "must be >= 1, got " + num(m.tokens));
  if (m.copies < 1) throw ConfigError("/mask/copies", "must be >= 1, got " + num(m.copies));
  if (m.tokens > max_count_positions / m.copies)
    throw ConfigError("/mask/tokens", num(m.tokens) + " tokens x " + num(m.copies) + " copies exceed " +
                                          num(max_count_positions) + " positions");
  if (m.kind == MaskSpec::Kind::sliding && m.window < 1)
    throw ConfigError("/mask/window", "a sliding mask needs a window >= 1, got " + num(m.window));
  if (m.kind == MaskSpec::Kind::phd && m.phd_variant != PhdVariant::plain && m.phd_W < 1)
    throw ConfigError("/mask/phd_W", "PHD-" + std::string(to_string(m.phd_variant)) + " needs W >= 1, got " +
                                         num(m.phd_W));
  if (m.chunk < 0) throw ConfigError("/mask/chunk", "must be >= 0, got " + num(m.chunk));
  if (m.chunk > 0 && (m.kind != MaskSpec::Kind::causal || m.final_copy_queries_only))
    throw ConfigError("/mask/chunk", std::string("chunked local attention applies to a causal mask with every row a "
                                                 "query, got ") + to_string(m.kind) +
                                         (m.final_copy_queries_only ? " with final-copy queries only" : ""));
  if (m.kind == MaskSpec::Kind::phd && m.phd_variant == PhdVariant::cswa && m.phd_C < 1)
    throw ConfigError("/mask/phd_C", "PHD-cswa needs a chunk C >= 1, got " + num(m.phd_C));
}

bool visible(const MaskSpec& m, std::int64_t q, std::int64_t k) {
  const std::int64_t N = m.positions();
  if (q < 0 || k < 0 || q >= N || k >= N || k > q) return false;  // every kind is causal
  const Cell qc = cell_of(q, m.copies), kc = cell_of(k, m.copies);
  if (m.final_copy_queries_only && qc.copy != m.copies - 1) return false;
  if (m.chunk > 0 && qc.token / m.chunk != kc.token / m.chunk) return false;
  switch (m.kind) {
    case MaskSpec::Kind::causal: return true;
    case MaskSpec::Kind::sliding: return q - m.window < k;
    case MaskSpec::Kind::intra: return kc.copy == qc.copy;
    case MaskSpec::Kind::phd: return phd_visible(m, qc, kc);
  }
  return false;
}

// ---- layouts ---------------------------------------------------------------------------

std::int64_t physical_of_logical(std::int64_t tokens, std::int64_t copies, Layout l, std::int64_t t) {
  const Cell c = cell_of(t, copies);
  switch (l) {
    case Layout::interleaved: return t;
    case Layout::stream_major: return c.copy * tokens + c.token;
    case Layout::phd_split:
      // [copy 0 of every token | copies 1..n-1 token-major, i.e. by hidden rank]
      return c.copy == 0 ? c.token : tokens + c.token * (copies - 1) + (c.copy - 1);
  }
  return t;
}

std::int64_t logical_of_physical(std::int64_t tokens, std::int64_t copies, Layout l, std::int64_t p) {
  switch (l) {
    case Layout::interleaved: return p;
    case Layout::stream_major: return (p % tokens) * copies + p / tokens;
    case Layout::phd_split: {
      if (p < tokens) return p * copies;
      const std::int64_t rank = p - tokens;
      return (rank / (copies - 1)) * copies + rank % (copies - 1) + 1;
    }
  }
  return p;
}

std::vector<std::int64_t> physical_to_logical(std::int64_t tokens, std::int64_t copies, Layout l) {
  std::vector<std::int64_t> perm(static_cast<std::size_t>(tokens * copies));
  for (std::int64_t p = 0; p < tokens * copies; ++p)
    perm[static_cast<std::size_t>(p)] = logical_of_physical(tokens, copies, l, p);
  return perm;
}

// ---- pair counts -----------------------------------------------------------------------

// Closed forms; each is checked against visible_pairs_brute in tests/model/test_mask.cpp.
std::int64_t visible_pairs(const MaskSpec& m) {
  validate(m);
  const std::int64_t L = m.tokens, n = m.copies;
  if (m.chunk > 0) return detail::chunked_pairs(m);
  switch (m.kind) {
    case MaskSpec::Kind::causal:  // query t sees t+1 keys: nL(nL+1)/2; final copy: (i+1)*n
      return m.final_copy_queries_only ? n * L * (L + 1) / 2 : m.positions() * (m.positions() + 1) / 2;
    case MaskSpec::Kind::sliding: return sliding_pairs(m);
    case MaskSpec::Kind::intra:  // query (i, k) sees its own copy of tokens 0..i: n*L(L+1)/2
      return (m.final_copy_queries_only ? 1 : n) * L * (L + 1) / 2;
    case MaskSpec::Kind::phd: return phd_pairs(m);
  }
  return 0;
}

// ---- materialisation and brute force -----------------------------------------------------

std::vector<std::uint8_t> materialize(const MaskSpec& m, Layout l) {
  check_materializable(m);
  const std::int64_t N = m.positions(), R = m.query_rows();
  const std::vector<std::int64_t> key_of = physical_to_logical(m.tokens, m.copies, l);
  std::vector<std::uint8_t> grid(static_cast<std::size_t>(R * N), 0);
  for (std::int64_t r = 0; r < R; ++r) {
    const std::int64_t q = logical_query(m, l, r);
    std::uint8_t* row = grid.data() + r * N;
    for (std::int64_t p = 0; p < N; ++p) row[p] = visible(m, q, key_of[static_cast<std::size_t>(p)]) ? 1 : 0;
  }
  return grid;
}

std::int64_t visible_pairs_brute(const MaskSpec& m) {
  check_materializable(m);
  std::int64_t count = 0;
  for (std::int64_t q = 0; q < m.positions(); ++q)
    for (std::int64_t k = 0; k <= q; ++k) count += visible(m, q, k) ? 1 : 0;
  return count;
}

TileCount visible_tiles_brute(const MaskSpec& m, Layout l, std::int64_t Bq, std::int64_t Bk) {
  if (Bq < 1 || Bk < 1)
    throw ConfigError("/tile", "tile sizes must be >= 1, got " + num(Bq) + "x" + num(Bk));
  const std::vector<std::uint8_t> grid = materialize(m, l);
  const std::int64_t N = m.positions(), R = m.query_rows();
  Bq = std::min(Bq, R);  // same tiles; keeps r0 + Bq from overflowing
  Bk = std::min(Bk, N);
  TileCount tc;
  for (std::int64_t r0 = 0; r0 < R; r0 += Bq) {
    const std::int64_t r1 = std::min(R, r0 + Bq);
    for (std::int64_t c0 = 0; c0 < N; c0 += Bk) {
      const std::int64_t c1 = std::min(N, c0 + Bk);
      std::int64_t seen = 0;
      for (std::int64_t r = r0; r < r1; ++r)
        for (std::int64_t c = c0; c < c1; ++c) seen += grid[static_cast<std::size_t>(r * N + c)];
      const std::int64_t area = (r1 - r0) * (c1 - c0);
      ++tc.total;
      if (seen > 0) {
        ++tc.visible;
        tc.executed_pairs += area;
      }
      if (seen == area) ++tc.full;
    }
  }
  return tc;
}

// ---- the mask of a design's layer ------------------------------------------------------------

MaskSpec layer_mask(const Config& c, std::int64_t layer, std::int64_t tokens) {
  const Backbone& b = c.effective;
  if (layer < 0 || layer >= b.num_layers)
    throw ConfigError("/layer", "layer " + num(layer) + " is out of range: the model has " + num(b.num_layers) +
                                    " layers (0.." + num(b.num_layers - 1) + ")");
  if (tokens < 1) throw ConfigError("/tokens", "must be >= 1, got " + num(tokens));
  MaskSpec m;
  m.tokens = tokens;
  const LayerAttention& att = b.layers[static_cast<std::size_t>(layer)];
  if (att.kind == AttentionKind::sliding) {
    m.kind = MaskSpec::Kind::sliding;
    m.window = att.window;
  }
  if (att.kind == AttentionKind::chunked) m.chunk = att.chunk;  // tokens; designs keep or refuse it
  shape_layer_mask(c.design.method, b, layer, m);
  // Designs that do not reshape it (baseline, VWN, looped) keep the backbone's mask.
  validate(m);
  return m;
}

Layout best_layout(const Config& c, std::int64_t tokens, std::int64_t Bq, std::int64_t Bk) {
  const Layout fallback = default_layout(c.design);
  if (copies_per_token(c.design.method) == 1) return fallback;
  // Executed pairs per layout, counting each distinct layer mask once (an HD design has
  // at most three kinds, each with or without mirrored queries). Only intra-copy layers
  // give stream-major an edge; without them the default stands.
  std::vector<std::pair<MaskSpec, std::int64_t>> distinct;  // mask, layers using it
  bool any_intra = false;
  for (std::int64_t l = 0; l < c.effective.num_layers; ++l) {
    const MaskSpec m = layer_mask(c, l, tokens);
    if (m.chunk > 0) return fallback;  // chunked layers are counted in interleaved order only
    any_intra = any_intra || m.kind == MaskSpec::Kind::intra;
    auto same = [&](const auto& e) {
      return e.first.kind == m.kind && e.first.window == m.window &&
             e.first.final_copy_queries_only == m.final_copy_queries_only;
    };
    auto it = std::find_if(distinct.begin(), distinct.end(), same);
    if (it == distinct.end()) distinct.push_back({m, 1});
    else ++it->second;
  }
  if (!any_intra) return fallback;
  auto work = [&](Layout l) {
    double pairs = 0;  // double: sums of up to ~2^62 pairs times layer counts
    for (const auto& [m, layers] : distinct)
      pairs += static_cast<double>(visible_tiles(m, l, Bq, Bk).executed_pairs) * static_cast<double>(layers);
    return pairs;
  };
  return work(Layout::stream_major) < work(Layout::interleaved) ? Layout::stream_major : Layout::interleaved;
}

}  // namespace hdlab::model
