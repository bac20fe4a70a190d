// Item models over core results, and the mask image's pixels.
#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <thread>

#include "background_job.hpp"
#include "gui_test_support.hpp"
#include "hdlab/gui_core/metric_info.hpp"
#include "hdlab/simulator/evaluate.hpp"
#include "layer_table_model.hpp"
#include "mask_image.hpp"
#include "metrics_model.hpp"
#include "session.hpp"

using namespace hdlab;

TEST_CASE("metrics model: a row per metric and per group, design and baseline values with units", "[gui][models]") {
  test::ensure_app();
  const model::Config c = test::with_design(test::profile_config("qwen3-8b.json"), R"({"hd": {"n": 4}})");
  const model::Config base = gui_core::baseline_config(c);
  const simulator::Scenario s;
  const simulator::Metrics d = simulator::evaluate(c, test::h100(), s);
  const simulator::Metrics b = simulator::evaluate(base, test::h100(), s);
  gui::MetricsModel m;
  CHECK(m.rowCount() == 0);
  m.setResults(d, b);
  REQUIRE(m.rowCount() == simulator::metric_count + gui_core::metric_group_count);
  const int row = gui::MetricsModel::rowOf(simulator::Metric::kv_bytes_per_seq);
  CHECK(m.data(m.index(row, gui::MetricsModel::Name), Qt::DisplayRole).toString() == "KV cache per sequence");
  CHECK(m.data(m.index(row, gui::MetricsModel::Name), Qt::ToolTipRole).toString().contains("kv_bytes_per_seq"));
  CHECK(m.data(m.index(row, gui::MetricsModel::Design), Qt::UserRole).toDouble() == d[simulator::Metric::kv_bytes_per_seq]);
  CHECK(m.data(m.index(row, gui::MetricsModel::Baseline), Qt::UserRole).toDouble() == b[simulator::Metric::kv_bytes_per_seq]);
  CHECK(m.data(m.index(row, gui::MetricsModel::Ratio), Qt::UserRole).toDouble() == Approx(4.0));
  CHECK(m.data(m.index(row, gui::MetricsModel::Ratio), Qt::DisplayRole).toString() == "4.00x");
  CHECK(m.data(m.index(row, gui::MetricsModel::Design), Qt::DisplayRole).toString().endsWith("GB"));
  CHECK(m.data(m.index(row, gui::MetricsModel::Unit), Qt::DisplayRole).toString() == "bytes");

  gui::ServingModel serving;
  serving.setResults(d, s);
  REQUIRE(serving.rowCount() == static_cast<int>(s.serving.batches.size()));
  REQUIRE(serving.columnCount() == static_cast<int>(s.serving.input_lengths.size()));
  CHECK(serving.data(serving.index(1, 2), Qt::UserRole).toDouble() == d.serving[1 * 3 + 2].tokens_per_s);
  CHECK(serving.headerData(0, Qt::Vertical, Qt::DisplayRole).toString() == "batch 1");
  CHECK(serving.data(serving.index(0, 0), Qt::DisplayRole).toString().contains("tokens/s"));
}

TEST_CASE("layer table: rows per layer - HD kinds editable and sent to the editor", "[gui][models]") {
  test::ensure_app();
  gui::Session session(gui_core::Catalog{});
  gui::LayerTableModel m(&session);
  CHECK(m.rowCount() == 0);
  session.setConfig(test::profile_config("welm-80b.json"), "WeLM-80B");
  REQUIRE(m.rowCount() == 49);
  CHECK(m.data(m.index(2, gui::LayerTableModel::Attention), Qt::DisplayRole).toString() == "local");
  CHECK(m.data(m.index(2, gui::LayerTableModel::Window), Qt::DisplayRole).toString() == "16,384 positions");
  CHECK(m.data(m.index(48, gui::LayerTableModel::KvFrom), Qt::DisplayRole).toLongLong() == 0);
  CHECK_FALSE(m.data(m.index(0, gui::LayerTableModel::KvFrom), Qt::DisplayRole).isValid());
  CHECK(m.data(m.index(0, gui::LayerTableModel::Ffn), Qt::DisplayRole).toString() == "MoE");
  CHECK(m.flags(m.index(0, gui::LayerTableModel::Attention)) & Qt::ItemIsEditable);
  CHECK_FALSE(m.flags(m.index(0, gui::LayerTableModel::Layer)) & Qt::ItemIsEditable);

  int edited_layer = -1;
  model::HdLayerKind edited_kind = model::HdLayerKind::local;
  m.onKindEdited = [&](int layer, model::HdLayerKind kind) {
    edited_layer = layer;
    edited_kind = kind;
  };
  CHECK(m.setData(m.index(5, gui::LayerTableModel::Attention), "full", Qt::EditRole));
  CHECK(edited_layer == 5);
  CHECK(edited_kind == model::HdLayerKind::full);
  CHECK_FALSE(m.setData(m.index(5, gui::LayerTableModel::Attention), "diagonal", Qt::EditRole));

  session.setLayerStages(std::vector<std::int64_t>(49, 1));
  CHECK(m.data(m.index(10, gui::LayerTableModel::Stage), Qt::DisplayRole).toLongLong() == 1);
  session.setConfig(test::with_design(test::profile_config("qwen3-8b.json"), R"({"vwn": {"m": 2, "n": 3}})"), "Qwen3-8B");
  CHECK(m.rowCount() == 36);
  CHECK_FALSE(m.flags(m.index(0, gui::LayerTableModel::Attention)) & Qt::ItemIsEditable);
  CHECK(session.layerStages().empty());  // stages belonged to the 49-layer model
}

TEST_CASE("mask image: stream colours where visible, white where masked", "[gui][models][mask]") {
  test::ensure_app();
  const model::Backbone b = model::parse_backbone(model::Json::parse(
      R"({"name": "tiny", "num_layers": 1, "hidden_size": 64, "num_heads": 4, "intermediate_size": 128, "vocab_size": 10})"));
  const model::Config c = model::make_config(b, model::parse_design(model::Json::parse(R"({"hd": {"n": 2, "layers": "intra"}})"), b));
  const gui_core::MaskPicture p = gui_core::mask_picture(model::layer_mask(c, 0, 2), model::Layout::interleaved);
  const QImage image = gui::mask_image(p);
  REQUIRE(image.size() == QSize(4, 4));
  const QRgb s0 = gui::stream_colour(0).rgb(), s1 = gui::stream_colour(1).rgb(), masked = gui::kMaskedColour.rgb();
  REQUIRE(s0 != s1);
  // Positions t = i*2 + k: rows are queries, columns keys; intra = same stream, causal.
  const QRgb expected[4][4] = {{s0, masked, masked, masked},
                               {masked, s1, masked, masked},
                               {s0, masked, s0, masked},
                               {masked, s1, masked, s1}};
  for (int r = 0; r < 4; ++r)
    for (int col = 0; col < 4; ++col) {
      INFO("row " << r << " col " << col);
      CHECK(image.pixel(col, r) == expected[r][col]);
    }
}

TEST_CASE("background job: result on the UI thread, progress, and cancel stops the work", "[gui][jobs]") {
  test::ensure_app();
  QObject context;
  gui::BackgroundJob<int> job(&context);
  int result = 0, last_done = 0, idles = 0;
  job.on_result = [&](const int& r) { result = r; };
  job.on_progress = [&](int done, int) { last_done = done; };
  job.on_idle = [&] { ++idles; };
  job.start([](const gui_core::ProgressFn& progress) {
    for (int i = 1; i <= 5; ++i) progress(i, 5);
    return 42;
  });
  job.wait();
  QCoreApplication::processEvents();
  CHECK(result == 42);
  CHECK(last_done == 5);
  CHECK(idles == 1);
  CHECK_FALSE(job.running());

  // A job that runs until told to stop: cancel makes its progress callback return false.
  std::atomic<bool> stopped{false};
  std::atomic<bool> started{false};
  job.start([&](const gui_core::ProgressFn& progress) {
    started = true;
    while (progress(0, 1)) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    stopped = true;
    return 7;
  });
  while (!started) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  job.cancel();
  for (int i = 0; i < 2000 && !stopped; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  CHECK(stopped);
  QCoreApplication::processEvents();
  CHECK(result == 42);  // the cancelled job's 7 is dropped

  // Errors arrive as ConfigErrors with their pointer.
  std::string pointer;
  job.on_error = [&](const model::ConfigError& e) { pointer = e.pointer(); };
  job.start([](const gui_core::ProgressFn&) -> int { throw model::ConfigError("/scenario/parallel/tp", "bad"); });
  job.wait();
  QCoreApplication::processEvents();
  CHECK(pointer == "/scenario/parallel/tp");
}
