// Tile plans against brute force: every tile's class and bits agree with model::visible on
// every pair, and the plan's counts agree with model::visible_pairs / visible_tiles.
#include <catch2/catch.hpp>

#include "hdlab/executor/attention_mask.hpp"
#include "hdlab/executor/op_cases.hpp"
#include "hdlab/model/mask.hpp"

using namespace hdlab::executor;
using hdlab::model::Layout;
using hdlab::model::MaskSpec;
using hdlab::model::PhdVariant;

namespace {

// Every pair of the plan's grid, by brute force.
void require_exact(const AttentionMask& mask, const TilePlan& plan) {
  std::int64_t pairs = 0;
  for (std::int64_t qt = 0; qt < plan.q_tiles(); ++qt)
    for (std::int64_t kt = 0; kt < plan.k_tiles(); ++kt) {
      std::int64_t seen = 0, area = 0;
      bool bits_agree = true;
      const std::uint64_t* bits = plan.partial_bits(qt, kt);
      for (std::int64_t r = qt * kTileQ; r < std::min(plan.query_rows(), (qt + 1) * kTileQ); ++r)
        for (std::int64_t c = kt * kTileK; c < std::min(plan.key_rows(), (kt + 1) * kTileK); ++c) {
          const bool v = mask.visible(r, c);
          seen += v;
          ++area;
          if (bits && (((bits[r - qt * kTileQ] >> (c - kt * kTileK)) & 1u) != 0) != v) bits_agree = false;
        }
      pairs += seen;
      const TileClass want = seen == 0 ? TileClass::skip : seen == area ? TileClass::full : TileClass::partial;
      INFO("tile " << qt << "," << kt << ": " << seen << " of " << area << " visible");
      REQUIRE(plan.at(qt, kt) == want);
      REQUIRE(bits_agree);
      REQUIRE((bits != nullptr) == (want == TileClass::partial));
    }
  REQUIRE(plan.visible_pairs() == pairs);
}

MaskSpec spec(MaskSpec::Kind kind, std::int64_t tokens, std::int64_t copies) {
  MaskSpec m;
  m.kind = kind;
  m.tokens = tokens;
  m.copies = copies;
  return m;
}

std::vector<MaskSpec> all_masks() {
  using K = MaskSpec::Kind;
  std::vector<MaskSpec> out;
  for (std::int64_t copies : {1, 2, 3, 4}) {
    for (std::int64_t tokens : {1, 37, 100}) {
      out.push_back(spec(K::causal, tokens, copies));
      out.push_back(spec(K::intra, tokens, copies));
      for (std::int64_t w : {1, 20, 64, 150}) {
        MaskSpec m = spec(K::sliding, tokens, copies);
        m.window = w;
        out.push_back(m);
      }
      if (copies < 2) continue;
      MaskSpec p = spec(K::phd, tokens, copies);
      out.push_back(p);
      for (std::int64_t W : {1, 16, 70}) {
        p.phd_variant = PhdVariant::swa;
        p.phd_W = W;
        out.push_back(p);
        p.phd_variant = PhdVariant::cswa;
        for (std::int64_t C : {1, 8, 33}) {
          p.phd_C = C;
          out.push_back(p);
        }
      }
    }
  }
  const std::size_t plain = out.size();
  for (std::size_t i = 0; i < plain; i += 3) {  // KV-mirror (final copy) variants of a sample
    MaskSpec m = out[i];
    m.final_copy_queries_only = true;
    out.push_back(m);
  }
  return out;
}

}  // namespace

TEST_CASE("tile plans are exact for every mask kind and layout", "[executor][plan]") {
  for (const MaskSpec& m : all_masks())
    for (Layout layout : {Layout::interleaved, Layout::stream_major, Layout::phd_split}) {
      INFO(hdlab::model::to_string(m.kind) << " tokens " << m.tokens << " copies " << m.copies << " window "
                                           << m.window << " W " << m.phd_W << " C " << m.phd_C << " final-copy "
                                           << m.final_copy_queries_only << " " << hdlab::model::to_string(layout));
      const AttentionMask mask = AttentionMask::prefill(m, layout);
      const TilePlan plan(mask);
      require_exact(mask, plan);
      // The simulator's closed forms count what this plan runs.
      CHECK(plan.visible_pairs() == hdlab::model::visible_pairs(m));
      const auto tiles = hdlab::model::visible_tiles(m, layout, kTileQ, kTileK);
      CHECK(plan.visible_tiles() == tiles.visible);
      CHECK(plan.full_tiles() == tiles.full);
      CHECK(plan.total_tiles() == tiles.total);
      CHECK(plan.executed_pairs() == tiles.executed_pairs);
    }
}

TEST_CASE("decode plans are exact", "[executor][plan]") {
  for (const MaskSpec& m : all_masks()) {
    if (m.tokens < 2) continue;
    AttentionCaseShape shape;
    shape.mask = m;
    shape.decode = true;
    const AttentionMask mask = attention_case_mask(shape);
    INFO(hdlab::model::to_string(m.kind) << " tokens " << m.tokens << " copies " << m.copies);
    REQUIRE(mask.query_rows() == (m.final_copy_queries_only ? 1 : m.copies));
    const TilePlan plan(mask);
    require_exact(mask, plan);
    // Every visible key of the step is in the cache: the kept keys lose no pair.
    std::int64_t all_visible = 0;
    for (auto q : mask.query_positions)
      for (std::int64_t k = 0; k < m.positions(); ++k) all_visible += hdlab::model::visible(m, q, k);
    CHECK(plan.visible_pairs() == all_visible);
  }
}

TEST_CASE("intra-stream layers skip tiles only in stream-major layout", "[executor][plan]") {
  MaskSpec m = spec(MaskSpec::Kind::intra, 512, 4);
  const TilePlan interleaved(AttentionMask::prefill(m, Layout::interleaved));
  const TilePlan stream(AttentionMask::prefill(m, Layout::stream_major));
  const TilePlan full(AttentionMask::prefill(spec(MaskSpec::Kind::causal, 512, 4), Layout::interleaved));
  CHECK(interleaved.visible_tiles() == full.visible_tiles());  // every causal tile holds a same-stream pair
  CHECK(stream.visible_tiles() * 4 <= full.visible_tiles() + 4 * stream.q_tiles());
  CHECK(stream.partial_tiles() <= stream.q_tiles());  // only the diagonal tiles need a mask
}

TEST_CASE("plans refuse malformed masks", "[executor][plan]") {
  AttentionMask bad = AttentionMask::decode(spec(MaskSpec::Kind::causal, 4, 1), {3}, {0, -1});
  CHECK_THROWS_AS(TilePlan(bad), hdlab::executor::BackendError);
  // A position past tokens x copies: the spec was not grown with the sequence.
  CHECK_THROWS_AS(TilePlan(AttentionMask::decode(spec(MaskSpec::Kind::causal, 4, 1), {4}, {0, 1, 2, 3, 4})),
                  hdlab::executor::BackendError);
  const TilePlan empty(AttentionMask::decode(spec(MaskSpec::Kind::causal, 4, 1), {}, {}));
  CHECK(empty.total_tiles() == 0);
}
