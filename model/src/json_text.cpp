// JSON text a user gave, parsed under hdlab's input rules: nesting at most
// max_json_depth levels, no repeated keys, and errors that say where and why.
#include <set>
#include <vector>

#include "hdlab/model/config_io.hpp"
#include "hdlab/model/json_reader.hpp"

namespace hdlab::model {

namespace {

// A reason text nlohmann-json builds can quote a whole long token ("last read: '...'");
// an error line stays readable.
std::string capped(std::string s, std::size_t max_chars = 200) {
  if (s.size() > max_chars) s = s.substr(0, max_chars - 3) + "...";
  return s;
}

// "[json.exception.parse_error.101] parse error at line 1, column 5: syntax error while
// parsing object key - unexpected '}'; expected string literal" -> the part after the
// position; "[json.exception.out_of_range.406] number overflow parsing '1e400'" -> the
// part after the id.
std::string parser_reason(const std::string& what) {
  std::size_t at = what.find("] ");
  std::string rest = at == std::string::npos ? what : what.substr(at + 2);
  if (rest.rfind("parse error", 0) == 0) {
    const std::size_t colon = rest.find(": ");
    if (colon != std::string::npos) rest = rest.substr(colon + 2);
  }
  return capped(rest);
}

// Byte offset -> "line L, column C" (both from 1). nlohmann's `byte` is one past the
// character it stopped at.
std::string line_and_column(const std::string& text, std::size_t byte) {
  std::size_t line = 1, col = 1;
  for (std::size_t i = 0; i + 1 < byte && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++line;
      col = 1;
    } else {
      ++col;
    }
  }
  return "line " + std::to_string(line) + ", column " + std::to_string(col);
}

// Walks the parser's events (nlohmann-json's parser callback) keeping the JSON pointer of
// every open container and the keys each open object has seen, so that a repeated key
// and too deep a nesting are refused while parsing: nothing downstream (copies,
// comparisons, dumps, all recursive in the JSON library) ever sees unbounded depth.
class InputRules {
 public:
  explicit InputRules(const std::string& source) : source_(source) {}

  bool operator()(int depth, Json::parse_event_t event, Json& parsed) {
    using E = Json::parse_event_t;
    switch (event) {
      case E::object_start:
      case E::array_start:
        // `depth` counts the containers already open around this one.
        if (depth >= max_json_depth)
          throw ConfigError(source_, "JSON nested deeper than " + std::to_string(max_json_depth) +
                                         " levels (hdlab's limit for input files) at " + shown(child_pointer()));
        open_.push_back(Frame{child_pointer(), event == E::array_start, 0, {}, {}});
        break;
      case E::key: {
        Frame& object = open_.back();
        object.last_key = parsed.get<std::string>();
        if (!object.keys.insert(object.last_key).second)
          throw ConfigError(source_, "the object at " + shown(object.pointer) + " repeats the key \"" +
                                         capped(object.last_key, 80) +
                                         "\" (JSON parsers keep one of the values and silently drop the other)");
        break;
      }
      case E::object_end:
      case E::array_end:
        open_.pop_back();
        value_done();
        break;
      case E::value:
        value_done();
        break;
    }
    return true;
  }

 private:
  struct Frame {
    std::string pointer;
    bool array = false;
    std::size_t next_index = 0;  // arrays: index of the next element
    std::set<std::string> keys;  // objects: the keys seen so far
    std::string last_key;
  };

  static std::string shown(const std::string& pointer) {
    return pointer.empty() ? std::string("the top level") : capped(pointer, 120);
  }

  // The pointer of the value that starts next inside the innermost open container.
  std::string child_pointer() const {
    if (open_.empty()) return "";
    const Frame& f = open_.back();
    return f.array ? pointer_join(f.pointer, f.next_index) : pointer_join(f.pointer, f.last_key);
  }

  void value_done() {
    if (!open_.empty() && open_.back().array) ++open_.back().next_index;
  }

  const std::string& source_;
  std::vector<Frame> open_;
};

}  // namespace

Json parse_json_text(const std::string& text, const std::string& source) {
  try {
    return Json::parse(text, InputRules(source));
  } catch (const Json::parse_error& e) {
    throw ConfigError(source, "invalid JSON at " + line_and_column(text, e.byte) + ": " + parser_reason(e.what()));
  } catch (const Json::exception& e) {
    // A number past double's range (1e400) is out_of_range, reported without a position.
    throw ConfigError(source, "invalid JSON: " + parser_reason(e.what()));
  }
}

Json json_scalar_or_text(const std::string& text) {
  try {
    Json j = parse_json_text(text, "");
    if (!j.is_structured()) return j;
  } catch (const ConfigError&) {  // not JSON, too deep, a number out of range: the text it is
  }
  return Json(text);
}

}  // namespace hdlab::model
