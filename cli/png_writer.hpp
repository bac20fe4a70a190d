#pragma once
// A minimal PNG writer for the CLI's pictures (mask heatmaps): 8-bit RGB in memory,
// encoded by libpng, written atomically. Only the CLI uses it; the libraries stay
// free of image code.
#include <cstdint>
#include <string>
#include <vector>

namespace hdlab::cli {

struct Rgb {
  std::uint8_t r = 0, g = 0, b = 0;
};

// Row-major pixels, [height][width] x RGB.
class RgbImage {
 public:
  RgbImage(std::int64_t width, std::int64_t height, Rgb background);
  std::int64_t width() const { return width_; }
  std::int64_t height() const { return height_; }
  void set(std::int64_t x, std::int64_t y, Rgb c);
  Rgb at(std::int64_t x, std::int64_t y) const;
  const std::vector<std::uint8_t>& bytes() const { return bytes_; }

 private:
  std::int64_t width_, height_;
  std::vector<std::uint8_t> bytes_;  // width * height * 3
};

// The PNG file's bytes. Throws std::runtime_error when libpng refuses the image.
std::string encode_png(const RgbImage& image);

// Encodes and writes through a temporary file and a rename (model::write_file_atomic);
// ConfigError naming the path when it cannot be written.
void write_png(const std::string& path, const RgbImage& image);

}  // namespace hdlab::cli
