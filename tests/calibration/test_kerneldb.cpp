// The kerneldb reader against the bundled tables (row counts of the source CSVs, first
// rows by hand), plain CSV against gzip, every bad file the reader refuses (file, line,
// column and reason in the message), and the 80/20 split by shape (share and pinned rows).
#include <catch2/catch.hpp>

#include <zlib.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <string>
#include <tuple>
#include <unistd.h>
#include <vector>

#include "hdlab/calibration/kerneldb.hpp"
#include "hdlab/model/error.hpp"

using namespace hdlab::calibration;
namespace fs = std::filesystem;

namespace {

const std::string bundled = std::string(HDLAB_SOURCE_DIR) + "/profiles/kerneldb";

const KernelDb& h100() {
  static const KernelDb db = read_kerneldb(bundled, "h100_sxm");
  return db;
}

// A fresh, empty folder for one test.
fs::path scratch(const std::string& name) {
  static int counter = 0;
  const fs::path dir = fs::temp_directory_path() /
                       ("hdlab_kerneldb_" + std::to_string(::getpid()) + "_" + std::to_string(counter++)) / name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

void write_text(const fs::path& p, const std::string& text) { std::ofstream(p, std::ios::binary) << text; }

// Gzip at `level` (0: stored blocks, so the text's bytes appear verbatim in the file).
void write_gz(const fs::path& p, const std::string& text, int level) {
  gzFile f = gzopen(p.c_str(), ("wb" + std::to_string(level)).c_str());
  REQUIRE(f != nullptr);
  REQUIRE(gzwrite(f, text.data(), static_cast<unsigned>(text.size())) == static_cast<int>(text.size()));
  REQUIRE(gzclose(f) == Z_OK);
}

std::string read_gz(const fs::path& p) {
  gzFile f = gzopen(p.c_str(), "rb");
  REQUIRE(f != nullptr);
  std::string out;
  char buf[1 << 16];
  for (int n; (n = gzread(f, buf, sizeof buf)) > 0;) out.append(buf, static_cast<std::size_t>(n));
  REQUIRE(gzclose(f) == Z_OK);
  return out;
}

std::string bytes_of(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

const std::string gemm_header = "framework,version,device,op_name,kernel_source,gemm_dtype,m,n,k,latency\n";
const std::string gemm_rows =
    "TRTLLM,1.3.0rc20,NVIDIA H100 80GB HBM3,gemm,torch_flow,bfloat16,4353,65536,51200,39.30102284749349\n"
    "TRTLLM,1.3.0rc20,NVIDIA H100 80GB HBM3,gemm,torch_flow,bfloat16,8192,65536,51200,79.18495178222656\n"
    "TRTLLM,1.3.0rc20,NVIDIA H100 80GB HBM3,gemm,torch_flow,fp8,16,4096,4096,0.0123\n";
const std::string good_gemm = gemm_header + gemm_rows;
const std::string nccl_table =
    "framework,version,device,op_name,kernel_source,nccl_dtype,num_gpus,message_size,latency\n"
    "TRTLLM,2.29.2,NVIDIA H100 80GB HBM3,all_gather,NCCL,half,2,256,0.00531\n";
const std::string moe_table =
    "framework,version,device,op_name,kernel_source,moe_dtype,num_tokens,hidden_size,inter_size,topk,num_experts,"
    "moe_tp_size,moe_ep_size,distribution,latency\n"
    "TRTLLM,1.3.0rc20,NVIDIA H100 80GB HBM3,moe,moe_torch_flow_cutlass,bfloat16,64,4096,1536,8,128,1,8,balanced,0.2\n";
const std::string context_table =
    "framework,version,device,op_name,kernel_source,batch_size,isl,num_heads,num_key_value_heads,head_dim,"
    "window_size,beam_width,attn_dtype,kv_cache_dtype,step,latency\n"
    "TRTLLM,1.3.0rc20,NVIDIA H100 80GB HBM3,context_attention,torch_flow,16,8192,96,1,128,0,1,bfloat16,bfloat16,0,53.5\n";

std::string replaced(std::string s, const std::string& from, const std::string& to) {
  const std::size_t at = s.find(from);
  REQUIRE(at != std::string::npos);
  return s.replace(at, from.size(), to);
}

std::string thrown_by_read(const fs::path& dir) {
  try {
    read_kerneldb(dir.parent_path().string(), dir.filename().string());
  } catch (const hdlab::model::ConfigError& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace

TEST_CASE("kerneldb: the bundled H100 tables read with the row counts of the source CSVs", "[kerneldb]") {
  const KernelDb& db = h100();
  CHECK(db.device == "h100_sxm");
  CHECK(db.device_name == "NVIDIA H100 80GB HBM3");
  // Data lines of /work/shared/kerneldb/h100_sxm/*.csv (wc -l minus the header).
  CHECK(db.gemm.size() == 100668);
  CHECK(db.context_attention.size() == 75840);
  CHECK(db.generation_attention.size() == 52033);
  CHECK(db.collectives.size() == 504 + 69);  // nccl_perf + custom_allreduce_perf
  CHECK(db.moe.size() == 126360);
  CHECK(db.files.at("gemm_perf") == bundled + "/h100_sxm/gemm_perf.csv.gz");
  CHECK(db.files.size() == 8);  // with gdn_perf and mamba2_perf (mhc_module_perf is the mHC module's)
  // gdn_perf: 1,796 rows; line 2: causal_conv1d_fn,context,1,1,1,1024,4,16,128,16,128,Qwen/Qwen3.5-0.8B,0.00546...
  REQUIRE(db.gdn.size() == 1796);
  const GdnRow& gdn = db.gdn.front();
  CHECK(std::tie(gdn.kernel, gdn.phase, gdn.model) ==
        std::make_tuple(std::string("causal_conv1d_fn"), std::string("context"), std::string("Qwen/Qwen3.5-0.8B")));
  CHECK(std::tie(gdn.batch, gdn.seq_len, gdn.d_model, gdn.d_conv, gdn.k_heads, gdn.k_dim, gdn.v_heads, gdn.v_dim) ==
        std::make_tuple(1.0, 1.0, 1024.0, 4.0, 16.0, 128.0, 16.0, 128.0));
  CHECK(gdn.seconds == 0.005462399870157242 / 1000);
  // mamba2_perf: 658 rows; line 2:
  // ...,causal_conv1d_fn,context,1,1,1,8192,128,4,64,64,8,256,MAMBA2_GENERIC_4K,0.01025...
  REQUIRE(db.mamba2.size() == 658);
  const Mamba2Row& mb = db.mamba2.front();
  CHECK(std::tie(mb.kernel, mb.phase, mb.model) ==
        std::make_tuple(std::string("causal_conv1d_fn"), std::string("context"), std::string("MAMBA2_GENERIC_4K")));
  CHECK(std::tie(mb.batch, mb.seq_len, mb.d_model, mb.d_state, mb.d_conv, mb.heads, mb.head_dim, mb.groups, mb.chunk) ==
        std::make_tuple(1.0, 1.0, 8192.0, 128.0, 4.0, 64.0, 64.0, 8.0, 256.0));
  CHECK(mb.seconds == 0.010259199887514114 / 1000);
  CHECK(mb.line == 2);

  // First data rows (line 2), latency in seconds.
  const GemmRow& g = db.gemm.front();
  CHECK(g.dtype == "bfloat16");
  CHECK(std::tie(g.m, g.n, g.k, g.line) == std::make_tuple(4353.0, 65536.0, 51200.0, std::int64_t{2}));
  CHECK(g.seconds == 39.30102284749349 / 1000);  // ms in the file
  const AttentionRow& d = db.generation_attention.front();  // 32,1,64,64,64,0,1,bfloat16,bfloat16,1,0.02393...
  CHECK(std::tie(d.batch, d.isl, d.step, d.heads, d.kv_heads, d.head_dim, d.window) ==
        std::make_tuple(32.0, 1.0, 1.0, 64.0, 64.0, 64.0, 0.0));
  CHECK(d.attn_dtype == "bfloat16");
  CHECK(d.kv_dtype == "bfloat16");
  CHECK(d.seconds == 0.023930666347344715 / 1000);
  const CollectiveRow& c = db.collectives.front();  // all_gather,NCCL,half,2,256,0.00531
  CHECK(std::tie(c.op, c.library, c.dtype) == std::make_tuple(std::string("all_gather"), std::string("nccl"), std::string("half")));
  CHECK(std::tie(c.gpus, c.elements, c.bytes) == std::make_tuple(2.0, 256.0, 512.0));
  CHECK(c.seconds == 0.00531 / 1000);
  const CollectiveRow& custom = db.collectives[504];  // custom_allreduce_perf line 2: bfloat16,2,128
  CHECK(std::tie(custom.op, custom.library, custom.dtype, custom.elements, custom.bytes, custom.line) ==
        std::make_tuple(std::string("all_reduce"), std::string("custom"), std::string("bfloat16"), 128.0, 256.0, std::int64_t{2}));
  const MoeRow& m = db.moe.front();  // fp8,1,3072,1024,8,256,16,16,power_law_1.01,0.026144000887870788
  CHECK(std::tie(m.dtype, m.kernel, m.distribution) ==
        std::make_tuple(std::string("fp8"), std::string("moe_torch_flow_cutlass"), std::string("power_law_1.01")));
  CHECK(std::tie(m.tokens, m.hidden, m.inter, m.topk, m.experts, m.tp, m.ep) ==
        std::make_tuple(1.0, 3072.0, 1024.0, 8.0, 256.0, 16.0, 16.0));
  // Every row carries its own line: the last gemm row is the file's last line.
  CHECK(db.gemm.back().line == 100669);
}

TEST_CASE("kerneldb: a plain-CSV folder and the gzip folder read the same rows", "[kerneldb]") {
  const fs::path plain = scratch("a100_sxm");
  for (const auto& entry : fs::directory_iterator(bundled + "/a100_sxm")) {
    const std::string name = entry.path().filename().string();
    write_text(plain / name.substr(0, name.size() - 3), read_gz(entry.path()));  // NAME.csv.gz -> NAME.csv
  }
  const KernelDb gz = read_kerneldb(bundled, "a100_sxm");
  const KernelDb csv = read_kerneldb(plain.parent_path().string(), "a100_sxm");
  CHECK(csv.files.at("gemm_perf") == (plain / "gemm_perf.csv").string());
  CHECK(gz.gemm.size() == 27384);
  CHECK(csv.device_name == gz.device_name);
  CHECK(csv.gemm == gz.gemm);
  CHECK(csv.context_attention == gz.context_attention);
  CHECK(csv.generation_attention == gz.generation_attention);
  CHECK(csv.collectives == gz.collectives);
  CHECK(csv.moe == gz.moe);
  // Windows line ends read the same.
  std::string crlf;
  for (char ch : bytes_of(plain / "nccl_perf.csv")) crlf += ch == '\n' ? std::string("\r\n") : std::string(1, ch);
  write_text(plain / "nccl_perf.csv", crlf);
  CHECK(read_kerneldb(plain.parent_path().string(), "a100_sxm").collectives == gz.collectives);
}

TEST_CASE("kerneldb: bad tables are refused naming the file, the line and the column", "[kerneldb][bad-input]") {
  struct Bad {
    const char* what;
    std::map<std::string, std::string> files;  // plain CSVs in the device folder
    const char* place;                         // "FILE:LINE" (or the file) the message starts with
    const char* column;                        // "" where the error has no column
    const char* reason;
  };
  const std::string rows_no_k = "TRTLLM,1.3.0rc20,NVIDIA H100 80GB HBM3,gemm,torch_flow,bfloat16,4353,65536,39.3\n";
  const std::vector<Bad> cases = {
      {"missing column", {{"gemm_perf.csv", replaced(gemm_header, ",k,", ",") + rows_no_k}}, "gemm_perf.csv:1", "\"k\"",
       "missing from the header"},
      {"column named twice", {{"gemm_perf.csv", replaced(good_gemm, ",m,n,", ",m,m,")}}, "gemm_perf.csv:1", "\"m\"",
       "named twice in the header"},
      {"non-numeric latency", {{"gemm_perf.csv", replaced(good_gemm, ",0.0123", ",fast")}}, "gemm_perf.csv:4", "\"latency\"",
       "\"fast\" is not a number"},
      {"NaN latency", {{"gemm_perf.csv", replaced(good_gemm, ",0.0123", ",nan")}}, "gemm_perf.csv:4", "\"latency\"",
       "\"nan\" is not a number"},
      {"negative latency", {{"gemm_perf.csv", replaced(good_gemm, ",0.0123", ",-0.5")}}, "gemm_perf.csv:4", "\"latency\"",
       "-0.5 ms is not a positive time"},
      {"zero latency", {{"gemm_perf.csv", replaced(good_gemm, ",0.0123", ",0")}}, "gemm_perf.csv:4", "\"latency\"",
       "0 ms is not a positive time"},
      {"negative shape", {{"gemm_perf.csv", replaced(good_gemm, ",8192,", ",-8192,")}}, "gemm_perf.csv:3", "\"m\"",
       "-8192 is below 1"},
      {"fractional shape", {{"gemm_perf.csv", replaced(good_gemm, ",4096,0.0123", ",4096.5,0.0123")}}, "gemm_perf.csv:4",
       "\"k\"", "4096.5 is not a whole number"},
      {"empty table", {{"gemm_perf.csv", gemm_header}}, "gemm_perf.csv:2", "", "the table has a header but no rows"},
      {"empty file", {{"gemm_perf.csv", ""}}, "gemm_perf.csv:1", "", "the file is empty"},
      {"unknown gemm dtype", {{"gemm_perf.csv", replaced(good_gemm, ",fp8,", ",fp64,")}}, "gemm_perf.csv:4", "\"gemm_dtype\"",
       "unknown precision \"fp64\" (known: bfloat16, half"},
      {"unknown nccl dtype", {{"gemm_perf.csv", good_gemm}, {"nccl_perf.csv", replaced(nccl_table, ",half,", ",float,")}},
       "nccl_perf.csv:2", "\"nccl_dtype\"", "unknown precision \"float\""},
      {"unknown kv-cache dtype",
       {{"gemm_perf.csv", good_gemm}, {"context_attention_perf.csv", replaced(context_table, "bfloat16,0,", "int4,0,")}},
       "context_attention_perf.csv:2", "\"kv_cache_dtype\"", "unknown precision \"int4\""},
      {"unknown collective", {{"gemm_perf.csv", good_gemm}, {"nccl_perf.csv", replaced(nccl_table, "all_gather", "broadcast")}},
       "nccl_perf.csv:2", "\"op_name\"", "unknown collective \"broadcast\""},
      {"heads not a multiple of kv heads",
       {{"gemm_perf.csv", good_gemm}, {"context_attention_perf.csv", replaced(context_table, ",96,1,128,", ",96,7,128,")}},
       "context_attention_perf.csv:2", "\"num_key_value_heads\"", "num_heads 96 is not a multiple of it"},
      {"short row", {{"gemm_perf.csv", replaced(good_gemm, ",51200,79.18495178222656", ",51200")}}, "gemm_perf.csv:3",
       "\"latency\"", "missing: the row has 9 fields, the header 10"},
      {"long row", {{"gemm_perf.csv", replaced(good_gemm, ",0.0123", ",0.0123,7")}}, "gemm_perf.csv:4", "\"latency\"",
       "the row has 11 fields, the header only 10"},
      {"quoted field", {{"gemm_perf.csv", replaced(good_gemm, "torch_flow,fp8", "\"torch,flow\",fp8")}}, "gemm_perf.csv:4",
       "\"kernel_source\"", "a quoted field"},
      {"two devices", {{"gemm_perf.csv", good_gemm}, {"nccl_perf.csv", replaced(nccl_table, "H100 80GB HBM3", "B200")}},
       "nccl_perf.csv:2", "\"device\"", "\"NVIDIA B200\" where the rows before say \"NVIDIA H100 80GB HBM3\""},
      {"missing gemm table", {{"nccl_perf.csv", nccl_table}}, "gemm_perf.csv", "", "the GEMM table is required"},
      {"experts not split evenly over ep", {{"gemm_perf.csv", good_gemm}, {"moe_perf.csv", replaced(moe_table, ",128,1,8,", ",128,1,3,")}},
       "moe_perf.csv:2", "\"moe_ep_size\"", "3 does not divide num_experts 128"},
      {"too many experts", {{"gemm_perf.csv", good_gemm}, {"moe_perf.csv", replaced(moe_table, ",128,1,8,", ",1000000,1,8,")}},
       "moe_perf.csv:2", "\"num_experts\"", "1000000 is more than 65536 experts"},
  };
  for (const Bad& b : cases) {
    CAPTURE(b.what);
    const fs::path dir = scratch("h100_sxm");
    for (const auto& [name, text] : b.files) write_text(dir / name, text);
    const std::string message = thrown_by_read(dir);
    const std::string place = (dir / b.place).string();
    CHECK(message.rfind(place + (std::string(b.place).find(':') == std::string::npos ? "" : ": "), 0) == 0);
    if (*b.column) CHECK(message.find(std::string("column ") + b.column + ": ") != std::string::npos);
    CHECK(message.find(b.reason) != std::string::npos);
    CAPTURE(message);
  }
}

TEST_CASE("kerneldb: truncated, corrupt and ambiguous gzip tables are refused", "[kerneldb][bad-input]") {
  const fs::path dir = scratch("h100_sxm");
  SECTION("a stored gzip cut in the middle of line 3's n field: line 3, column n") {
    write_gz(dir / "gemm_perf.csv.gz", good_gemm, 0);
    const std::string gz = bytes_of(dir / "gemm_perf.csv.gz");
    const std::string cut_after = "torch_flow,bfloat16,8192,655";  // line 3, inside "65536"
    const std::size_t at = gz.find(cut_after);
    REQUIRE(at != std::string::npos);
    write_text(dir / "gemm_perf.csv.gz", gz.substr(0, at + cut_after.size()));
    const std::string message = thrown_by_read(dir);
    CHECK(message.rfind((dir / "gemm_perf.csv.gz:3: column \"n\": the gzip stream ends early").string(), 0) == 0);
  }
  SECTION("the bundled H100 gemm table cut in half: a line near the middle, a column") {
    const std::string gz = bytes_of(bundled + "/h100_sxm/gemm_perf.csv.gz");
    write_text(dir / "gemm_perf.csv.gz", gz.substr(0, gz.size() / 2));
    const std::string message = thrown_by_read(dir);
    std::smatch m;
    REQUIRE(std::regex_search(message, m, std::regex("gemm_perf\\.csv\\.gz:([0-9]+): column \"[a-z_]+\": the gzip stream ends early")));
    CHECK(std::stol(m[1]) > 20000);  // 100669 lines in all
    CHECK(std::stol(m[1]) < 80000);
  }
  SECTION("a corrupt gzip (a byte of the compressed data flipped)") {
    write_gz(dir / "gemm_perf.csv.gz", good_gemm + good_gemm.substr(gemm_header.size()), 9);
    std::string gz = bytes_of(dir / "gemm_perf.csv.gz");
    gz[gz.size() / 2] = static_cast<char>(gz[gz.size() / 2] ^ 0x55);
    write_text(dir / "gemm_perf.csv.gz", gz);
    const std::string message = thrown_by_read(dir);
    CHECK(message.rfind((dir / "gemm_perf.csv.gz:").string(), 0) == 0);
    CHECK(message.find("not a readable gzip file") != std::string::npos);
  }
  SECTION("both NAME.csv and NAME.csv.gz") {
    write_text(dir / "gemm_perf.csv", good_gemm);
    write_gz(dir / "gemm_perf.csv.gz", good_gemm, 9);
    CHECK(thrown_by_read(dir).find("both gemm_perf.csv and gemm_perf.csv.gz are here") != std::string::npos);
  }
  SECTION("no such device folder: the message lists the devices there") {
    try {
      read_kerneldb(bundled, "h800_sxm");
      FAIL("no error");
    } catch (const hdlab::model::ConfigError& e) {
      CHECK(e.pointer() == bundled + "/h800_sxm");
      CHECK(e.reason() == "no such kerneldb device folder (devices in " + bundled + ": a100_sxm, b200_sxm, h100_sxm)");
    }
  }
}

TEST_CASE("kerneldb: a table over 256 MiB uncompressed is refused before it is read further", "[kerneldb][bad-input]") {
  // 257 MiB: a header, then blank lines (a few hundred kB of gzip).
  const fs::path dir = scratch("h100_sxm");
  gzFile f = gzopen((dir / "gemm_perf.csv.gz").c_str(), "wb1");
  REQUIRE(f != nullptr);
  gzwrite(f, gemm_header.data(), static_cast<unsigned>(gemm_header.size()));
  const std::string blank(1 << 20, '\n');
  for (int i = 0; i < 257; ++i) REQUIRE(gzwrite(f, blank.data(), static_cast<unsigned>(blank.size())) > 0);
  REQUIRE(gzclose(f) == Z_OK);
  CHECK(fs::file_size(dir / "gemm_perf.csv.gz") < (4u << 20));
  const std::string message = thrown_by_read(dir);
  CHECK(message.rfind((dir / "gemm_perf.csv.gz:").string(), 0) == 0);
  CHECK(message.find("larger than 256 MiB uncompressed") != std::string::npos);
}

TEST_CASE("kerneldb: precision sizes", "[kerneldb]") {
  CHECK(precision_size("bfloat16")->activation_bytes == 2);
  CHECK(precision_size("half")->weight_bytes == 2);
  CHECK(precision_size("int8")->activation_bytes == 1);
  CHECK(precision_size("nvfp4")->weight_bytes == 0.5);
  CHECK(precision_size("int4_wo")->activation_bytes == 2);  // weight-only: bf16 activations
  CHECK(precision_size("int4_wo")->weight_bytes == 0.5);
  CHECK(precision_size("w4a8_mxfp4_mxfp8")->activation_bytes == 1);
  CHECK(!precision_size("fp64"));
  CHECK(!precision_size("BFLOAT16"));  // names are matched as written
  // Every precision the bundled tables name is known (else they would not read).
  std::set<std::string> named;
  for (const std::string device : {"h100_sxm", "a100_sxm", "b200_sxm"}) {
    const KernelDb db = device == "h100_sxm" ? h100() : read_kerneldb(bundled, device);
    for (const auto& r : db.gemm) named.insert(r.dtype);
    for (const auto& r : db.context_attention) named.insert({r.attn_dtype, r.kv_dtype});
    for (const auto& r : db.generation_attention) named.insert({r.attn_dtype, r.kv_dtype});
    for (const auto& r : db.collectives) named.insert(r.dtype);
    for (const auto& r : db.moe) named.insert(r.dtype);
  }
  // The known list is exactly the data's (kerneldb.hpp): nothing listed that no table uses.
  const std::vector<std::string> known = known_precisions();
  CHECK(named == std::set<std::string>(known.begin(), known.end()));
}

// ---- the 80/20 split by shape ----

namespace {

// Share of rows and of distinct shapes held out; `shape` gives a row's shape key.
template <class Row, class Shape>
std::pair<double, double> held_out_share(const std::vector<Row>& rows, Shape shape) {
  std::map<decltype(shape(rows.front())), bool> shapes;
  std::size_t held = 0;
  for (const Row& r : rows) {
    const bool h = held_out(r);
    held += h ? 1 : 0;
    const auto [it, fresh] = shapes.emplace(shape(r), h);
    if (!fresh && it->second != h) FAIL("two rows of one shape fall on different sides, line " << r.line);
  }
  std::size_t held_shapes = 0;
  for (const auto& [k, h] : shapes) held_shapes += h ? 1 : 0;
  return {static_cast<double>(held) / static_cast<double>(rows.size()),
          static_cast<double>(held_shapes) / static_cast<double>(shapes.size())};
}

}  // namespace

TEST_CASE("kerneldb split: 20% +- 2% of the H100 rows and shapes of every row kind, every precision of a shape together",
          "[kerneldb]") {
  const KernelDb& db = h100();
  auto attention_shape = [](const AttentionRow& r) {
    return std::vector<double>{r.batch, r.isl, r.step, r.heads, r.kv_heads, r.head_dim, r.window};
  };
  const std::vector<std::pair<std::string, std::pair<double, double>>> shares = {
      {"gemm", held_out_share(db.gemm, [](const GemmRow& r) { return std::vector<double>{r.m, r.n, r.k}; })},
      {"context attention", held_out_share(db.context_attention, attention_shape)},
      {"generation attention", held_out_share(db.generation_attention, attention_shape)},
      {"collectives", held_out_share(db.collectives, [](const CollectiveRow& r) { return std::make_tuple(r.op, r.gpus, r.elements); })},
      {"moe", held_out_share(db.moe, [](const MoeRow& r) {
         return std::vector<double>{r.tokens, r.hidden, r.inter, r.topk, r.experts, r.tp, r.ep};
       })},
  };
  for (const auto& [kind, share] : shares) {
    CAPTURE(kind, share.first, share.second);
    CHECK(share.first == Approx(0.20).margin(0.02));   // rows
    CHECK(share.second == Approx(0.20).margin(0.02));  // distinct shapes
  }
}

TEST_CASE("kerneldb split: pinned rows keep their side, and precision, latency, line, library, kernel or distribution do "
          "not move a row",
          "[kerneldb]") {
  // Sides computed by an independent FNV-1a (Python) over the H100 files; hash in comments.
  auto gemm = [](double m, double n, double k) { return GemmRow{"bfloat16", m, n, k, 1e-3, 2}; };
  CHECK(held_out(gemm(4097, 65536, 51200)));    // 0x15540a0e013e14c5 (line 5)
  CHECK(held_out(gemm(16384, 65536, 51200)));   // 0x1537fe7960339504 (line 12)
  CHECK_FALSE(held_out(gemm(4353, 65536, 51200)));  // 0x38f9f505ab933cae (line 2): just above 0x3333...
  CHECK_FALSE(held_out(gemm(8192, 65536, 51200)));  // 0xcda6d0c247d0c1a4 (line 3)
  auto attention = [](double b, double isl, double step, double h, double kvh, double hd) {
    AttentionRow r;
    std::tie(r.batch, r.isl, r.step, r.heads, r.kv_heads, r.head_dim) = std::make_tuple(b, isl, step, h, kvh, hd);
    return r;
  };
  CHECK(held_out(attention(8, 12288, 0, 96, 2, 256)));        // context line 4: 0x19fd0167ee82c0e4
  CHECK_FALSE(held_out(attention(16, 8192, 0, 96, 1, 128)));  // context line 2: 0x6fb6d8f27ad96174
  CHECK(held_out(attention(32, 1, 511, 64, 64, 64)));         // generation line 18: 0x0b27f5df25550120
  CHECK_FALSE(held_out(attention(32, 1, 7, 64, 64, 64)));     // generation line 6: 0x92b450937dfc1e43
  auto collective = [](std::string op, double gpus, double elements) {
    return CollectiveRow{std::move(op), "nccl", "half", gpus, elements, 2 * elements, 1e-5, 2};
  };
  CHECK(held_out(collective("all_gather", 2, 512)));         // 0x26ca36c045891be2
  CHECK_FALSE(held_out(collective("all_gather", 2, 256)));   // 0x6177bb35f3b54907
  CHECK(held_out(collective("all_reduce", 2, 1024)));        // 0x0e862a0694f3133d
  CHECK_FALSE(held_out(collective("all_reduce", 2, 128)));   // 0x7bd8b757d5feb751
  auto moe = [](double tokens) { return MoeRow{"fp8", "moe_torch_flow_cutlass", "power_law_1.01", tokens, 3072, 1024, 8, 256, 16, 16, 1e-5, 2}; };
  CHECK(held_out(moe(16)));        // 0x11507c75bc37689a
  CHECK_FALSE(held_out(moe(1)));   // 0x404cc95c103c82df

  // What is not the shape never moves a row.
  GemmRow g = gemm(4097, 65536, 51200);
  g.dtype = "fp8_block";
  g.seconds = 7;
  g.line = 99;
  CHECK(held_out(g));
  CollectiveRow c = collective("all_reduce", 2, 1024);
  c.library = "custom";
  c.dtype = "bfloat16";
  CHECK(held_out(c));
  MoeRow e = moe(16);
  e.dtype = "bfloat16";
  e.kernel = "moe_torch_flow";
  e.distribution = "balanced";
  CHECK(held_out(e));
  AttentionRow a = attention(8, 12288, 0, 96, 2, 256);
  a.attn_dtype = "fp8";
  a.kv_dtype = "fp8";
  CHECK(held_out(a));
}
