// The runner's supporting pieces: workspace buffers, KV caches, the op profiler, the
// tile-plan cache, and the layer groups (the simulator's grouping, re-derived here so
// the executor never includes simulator code).
#include <algorithm>

#include "hdlab/model/error.hpp"
#include "hdlab/model/schedule.hpp"
#include "runner_internal.hpp"

namespace hdlab::executor {

namespace detail {

// ---- workspace -------------------------------------------------------------------------

Tensor Workspace::get(Buf which, Shape shape, ScalarType type) {
  const std::int64_t need = element_count(shape);
  Tensor& buf = buffers_[{static_cast<int>(which), static_cast<int>(type)}];
  if (!buf.defined() || buf.numel() < need) {
    // Grow by a quarter beyond the need so slowly growing decode contexts do not
    // reallocate every step.
    buf = backend_.allocate({std::max<std::int64_t>(need + need / 4, 1)}, type);
  }
  return buf.slice_rows(0, need).reshaped(std::move(shape));
}

std::size_t Workspace::bytes() const {
  std::size_t b = 0;
  for (const auto& [key, t] : buffers_) b += t.bytes();
  return b;
}

// ---- KV cache --------------------------------------------------------------------------

void KvCache::reset(Backend& b, std::int64_t capacity, std::int64_t kv_heads, std::int64_t head_dim, ScalarType type,
                    bool values) {
  k_ = b.allocate({capacity, kv_heads, head_dim}, type);
  v_ = values ? b.allocate({capacity, kv_heads, head_dim}, type) : Tensor();
  start_ = 0;
  positions_.clear();
}

void KvCache::make_room(Backend& b, std::int64_t rows) {
  const std::int64_t capacity = k_.dim(0), n = live();
  if (start_ + n + rows <= capacity) return;
  if (n + rows > capacity)
    throw BackendError("kv cache: " + std::to_string(n + rows) + " entries exceed its capacity of " +
                       std::to_string(capacity) + " (more tokens than the sequence was started for?)");
  // Sliding caches drop entries at the front; capacity >= 2 * (kept + new) makes the
  // live rows and their new place disjoint whenever this move is needed.
  if (start_ < n) throw BackendError("kv cache: cannot compact in place (capacity too small for the window)");
  if (n > 0) {
    b.copy(k_.slice_rows(start_, n), k_.slice_rows(0, n));
    if (v_.defined()) b.copy(v_.slice_rows(start_, n), v_.slice_rows(0, n));
  }
  start_ = 0;
}

void KvCache::append(Backend& b, const Tensor& k, const Tensor& v, const std::vector<std::int64_t>& pos) {
  const std::int64_t rows = k.dim(0);
  make_room(b, rows);
  const std::int64_t at = start_ + live();
  b.copy(k, k_.slice_rows(at, rows));
  if (v_.defined()) b.copy(v, v_.slice_rows(at, rows));
  positions_.insert(positions_.end(), pos.begin(), pos.end());
}

void KvCache::overwrite_tail(Backend& b, const Tensor& k, const Tensor& v) {
  const std::int64_t rows = k.dim(0), at = start_ + live() - rows;
  b.copy(k, k_.slice_rows(at, rows));
  if (v_.defined()) b.copy(v, v_.slice_rows(at, rows));
}

void KvCache::append_gathered(Backend& b, const Tensor& k_all, const Tensor& v_all, const Tensor& ids,
                              const std::vector<std::int64_t>& pos) {
  const std::int64_t rows = ids.dim(0);
  if (rows == 0) return;
  make_room(b, rows);
  const std::int64_t at = start_ + live(), width = k_.dim(1) * k_.dim(2);
  const std::int64_t all = k_all.dim(0);
  b.gather_rows(k_all.reshaped({all, width}), ids, k_.slice_rows(at, rows).reshaped({rows, width}));
  if (v_.defined())
    b.gather_rows(v_all.reshaped({all, width}), ids, v_.slice_rows(at, rows).reshaped({rows, width}));
  positions_.insert(positions_.end(), pos.begin(), pos.end());
}

void KvCache::retain(Backend& b, Workspace& ws, const std::function<bool(std::int64_t)>& keep) {
  std::size_t lead = 0;
  while (lead < positions_.size() && !keep(positions_[lead])) ++lead;
  start_ += static_cast<std::int64_t>(lead);
  positions_.erase(positions_.begin(), positions_.begin() + static_cast<std::ptrdiff_t>(lead));
  std::size_t first = 0;
  while (first < positions_.size() && keep(positions_[first])) ++first;
  if (first == positions_.size()) return;
  // Rows after the first dropped one: the kept ones move down (through scratch, as the
  // source and destination overlap). PHD: O(W + K) rows per step.
  std::vector<std::int32_t> ids;
  std::vector<std::int64_t> kept;
  for (std::size_t i = first; i < positions_.size(); ++i)
    if (keep(positions_[i])) {
      ids.push_back(static_cast<std::int32_t>(start_ + static_cast<std::int64_t>(i)));
      kept.push_back(positions_[i]);
    }
  const std::int64_t n = static_cast<std::int64_t>(ids.size()), width = k_.dim(1) * k_.dim(2);
  const std::int64_t capacity = k_.dim(0), at = start_ + static_cast<std::int64_t>(first);
  if (n > 0) {
    Tensor id_t = ws.get(Buf::kv_ids, {n}, ScalarType::i32);
    b.upload(id_t, ids);
    for (Tensor* t : {&k_, &v_}) {
      if (!t->defined()) continue;
      Tensor scratch = ws.get(Buf::kv_scratch, {n, width}, t->type());
      b.gather_rows(t->reshaped({capacity, width}), id_t, scratch);
      b.copy(scratch, t->slice_rows(at, n).reshaped({n, width}));
    }
  }
  positions_.resize(first);
  positions_.insert(positions_.end(), kept.begin(), kept.end());
}

// ---- profiler --------------------------------------------------------------------------

void Profiler::begin_call(std::size_t groups) {
  step_ = StepProfile{};
  step_.groups.assign(groups, OpTimes{});
  records_.clear();
  used_ = 0;
  if (!total_) total_ = backend_.make_timer();
  total_->start();
}

OpMeasure& Profiler::slot(int group, OpKind kind) {
  OpTimes& t = group < 0 ? step_.outside : step_.groups[static_cast<std::size_t>(group)];
  return t[static_cast<std::size_t>(kind)];
}

void Profiler::start(int group, OpKind kind, double calls) {
  if (open_) throw std::logic_error("profiler: op started inside another op");
  slot(group, kind).calls += calls;
  open_group_ = group;
  open_kind_ = kind;
  open_ = true;
  if (!per_op_) return;
  if (used_ == timers_.size()) timers_.push_back(backend_.make_timer());
  EventTimer* t = timers_[used_++].get();
  records_.push_back({group, kind, t});
  t->start();
}

void Profiler::stop() {
  open_ = false;
  if (per_op_) records_.back().timer->stop();
}

OpMeasure& Profiler::current() { return slot(open_group_, open_kind_); }

void Profiler::end_call(StepProfile& out) {
  total_->stop();
  step_.total_ms = total_->elapsed_ms();
  for (const Record& r : records_) slot(r.group, r.kind).ms += r.timer->elapsed_ms();
  out.total_ms = step_.total_ms;
  out.groups = std::move(step_.groups);
  out.outside = step_.outside;
}

void charge_flops(const model::PassProgram& program, const std::vector<int>& group_of_layer, StepProfile& out) {
  for (const model::RunOps& r : program.runs) {
    OpTimes& t = out.groups[static_cast<std::size_t>(group_of_layer[static_cast<std::size_t>(r.run.layer)])];
    for (std::size_t k = 0; k < t.size(); ++k) t[k].flops += r.ops[k].cost.flops;
  }
  for (std::size_t k = 0; k < out.outside.size(); ++k) out.outside[k].flops += program.outside[k].cost.flops;
}

// ---- plans -----------------------------------------------------------------------------

namespace {

std::uint64_t mask_hash(const AttentionMask& m) {
  std::uint64_t h = 0xcbf29ce484222325ull;
  auto mix = [&](std::int64_t v) { h = (h ^ static_cast<std::uint64_t>(v)) * 0x100000001b3ull; };
  const model::MaskSpec& s = m.spec;
  for (std::int64_t v : {static_cast<std::int64_t>(s.kind), s.tokens, s.copies, s.window, s.chunk,
                         static_cast<std::int64_t>(s.phd_variant), s.phd_W, s.phd_C,
                         static_cast<std::int64_t>(s.final_copy_queries_only), m.query_rows(), m.key_rows()})
    mix(v);
  for (auto p : m.query_positions) mix(p);
  for (auto p : m.key_positions) mix(p);
  return h;
}

}  // namespace

std::shared_ptr<const TilePlan> PlanCache::get(const AttentionMask& mask) {
  const std::uint64_t h = mask_hash(mask);
  auto same = [&](const Entry& e) {
    const model::MaskSpec &x = e.mask.spec, &y = mask.spec;
    return e.hash == h && x.kind == y.kind && x.tokens == y.tokens && x.copies == y.copies && x.window == y.window && x.chunk == y.chunk &&
           x.phd_variant == y.phd_variant && x.phd_W == y.phd_W && x.phd_C == y.phd_C &&
           x.final_copy_queries_only == y.final_copy_queries_only && e.mask.query_positions == mask.query_positions &&
           e.mask.key_positions == mask.key_positions;
  };
  for (auto it = entries_.begin(); it != entries_.end(); ++it)
    if (same(*it)) {
      if (it != entries_.begin()) {  // most recent first
        Entry e = std::move(*it);
        entries_.erase(it);
        entries_.push_front(std::move(e));
      }
      return entries_.front().plan;
    }
  // A call's distinct masks (HD: up to 3 kinds x mirror, per stream in stream-major
  // decode) all stay cached across one call and its repeats.
  constexpr std::size_t kKeep = 64;
  if (entries_.size() == kKeep) entries_.pop_back();
  entries_.push_front(Entry{h, mask, std::make_shared<const TilePlan>(mask)});
  return entries_.front().plan;
}

}  // namespace detail

// ---- public small pieces ---------------------------------------------------------------

const char* to_string(Phase p) {
  switch (p) {
    case Phase::prefill: return "prefill";
    case Phase::decode: return "decode";
    case Phase::train_forward: return "train-forward";
  }
  return "?";
}

Phase phase_from_string(const std::string& s) {
  if (s == "prefill") return Phase::prefill;
  if (s == "decode") return Phase::decode;
  if (s == "train-forward" || s == "train_forward") return Phase::train_forward;
  throw model::ConfigError("/phase", "must be one of prefill, decode, train-forward, got \"" + s + "\"");
}

OpMeasure& OpMeasure::operator+=(const OpMeasure& o) {
  ms += o.ms;
  flops += o.flops;
  calls += o.calls;
  pairs_exact += o.pairs_exact;
  pairs_executed += o.pairs_executed;
  return *this;
}

OpMeasure StepProfile::op_total(model::OpKind k) const {
  OpMeasure m = outside[static_cast<std::size_t>(k)];
  for (const auto& g : groups) m += g[static_cast<std::size_t>(k)];
  return m;
}

double StepProfile::flops_total() const {
  double f = 0;
  for (int k = 0; k < model::op_kind_count; ++k) f += op_total(static_cast<model::OpKind>(k)).flops;
  return f;
}

std::vector<LayerGroup> layer_groups(const model::Config& c, std::vector<int>* group_of_layer) {
  const model::Backbone& b = c.effective;
  std::vector<LayerGroup> groups;
  std::vector<int> of(static_cast<std::size_t>(b.num_layers));
  const model::DesignFeatures f = model::design_features(c.design.method);
  for (std::int64_t l = 0; l < b.num_layers; ++l) {
    const auto& att = b.layers[static_cast<std::size_t>(l)];
    const model::LayerAttentionRole role = model::layer_role(c.design.method, b, l);
    // The simulator's signature keeps the backbone's kind under HD and PHD too.
    const bool sliding = att.kind == model::AttentionKind::sliding, chunked = att.kind == model::AttentionKind::chunked;
    const bool linear = b.is_linear_layer(l);  // a Gated DeltaNet mixer: no attention kind of its own
    const std::string base = linear    ? "linear"
                             : sliding ? "sliding w=" + std::to_string(att.window)
                             : chunked ? "chunked c=" + std::to_string(att.chunk)
                                       : "full";
    std::string label = base;
    if (f.streams) label = model::to_string(role.stream_kind);
    if (f.hidden_copies) label = std::string("phd-") + model::to_string(model::layer_mask(c, l, 1).phd_variant);
    if ((f.streams || f.hidden_copies) && linear) label += " linear";
    if ((f.streams || f.hidden_copies) && (sliding || chunked)) label += " (base " + base + ")";
    if (att.nope) label += " nope";
    if (b.is_moe_layer(l)) label += " moe";
    if (b.is_mirrored(l)) label += role.final_queries_only ? " kv-mirror final-queries" : " kv-mirror";
    const model::LayerSchedule schedule = model::layer_schedule(c.design.method, l);
    if (schedule.role != model::LoopRole::none) label += std::string(" ") + model::to_string(schedule.role);
    const std::int64_t passes = schedule.passes;
    auto it = std::find_if(groups.begin(), groups.end(), [&](const LayerGroup& g) { return g.label == label; });
    if (it == groups.end()) {
      groups.push_back(LayerGroup{label, l, 0, 0});
      it = groups.end() - 1;
    }
    it->layers += 1;
    it->passes += passes;
    of[static_cast<std::size_t>(l)] = static_cast<int>(it - groups.begin());
  }
  if (group_of_layer) *group_of_layer = std::move(of);
  return groups;
}

}  // namespace hdlab::executor
