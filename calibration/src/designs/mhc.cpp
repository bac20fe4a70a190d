// Reading mHC's kernel table (hdlab/calibration/designs/mhc.hpp).
#include "hdlab/calibration/designs/mhc.hpp"

#include "../kernel_table.hpp"

namespace hdlab::calibration {

namespace {

using detail::CsvTable;
using detail::DeviceCheck;

std::vector<MhcRow> read_mhc(CsvTable& t, DeviceCheck& device) {
  device.start(t);
  const std::size_t op = t.column("op_name"), kernel = t.column("kernel_source"), tokens = t.column("num_tokens"),
                    sites = t.column("num_sites"), streams = t.column("hc_mult"), hidden = t.column("hidden_size"),
                    iters = t.column("sinkhorn_iters"), latency = t.column("latency");
  std::vector<MhcRow> rows;
  while (t.next()) {
    MhcRow& r = rows.emplace_back();
    r.op = std::string(t.text(op));
    if (r.op != "pre" && r.op != "post") t.fail(op, "is \"" + r.op + "\", not pre or post");
    r.kernel = std::string(t.text(kernel));
    r.tokens = t.whole(tokens, 1);
    r.sites = t.whole(sites, 1);
    r.streams = t.whole(streams, 1);
    r.hidden = t.whole(hidden, 1);
    r.sinkhorn_iters = t.whole(iters, 1);
    r.seconds = t.seconds(latency);
    r.line = t.line();
    device.check(t);
  }
  return rows;
}

}  // namespace

std::vector<MhcRow> read_mhc_module_perf(const KernelDb& db) {
  const std::optional<std::string> path = detail::find_table(db.folder, "mhc_module_perf");
  if (!path) return {};
  CsvTable table(*path, detail::read_table_text(*path));
  std::string device = db.device_name;  // every row must name the device the other tables do
  DeviceCheck check(device);
  return read_mhc(table, check);
}

}  // namespace hdlab::calibration
