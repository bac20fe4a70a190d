#include "png_writer.hpp"

#include <png.h>

#include <cstring>
#include <stdexcept>

#include "hdlab/model/files.hpp"

namespace hdlab::cli {

RgbImage::RgbImage(std::int64_t width, std::int64_t height, Rgb background)
    : width_(width), height_(height), bytes_(static_cast<std::size_t>(width * height * 3)) {
  for (std::int64_t i = 0; i < width * height; ++i) {
    bytes_[static_cast<std::size_t>(3 * i)] = background.r;
    bytes_[static_cast<std::size_t>(3 * i + 1)] = background.g;
    bytes_[static_cast<std::size_t>(3 * i + 2)] = background.b;
  }
}

void RgbImage::set(std::int64_t x, std::int64_t y, Rgb c) {
  const auto i = static_cast<std::size_t>(3 * (y * width_ + x));
  bytes_[i] = c.r;
  bytes_[i + 1] = c.g;
  bytes_[i + 2] = c.b;
}

Rgb RgbImage::at(std::int64_t x, std::int64_t y) const {
  const auto i = static_cast<std::size_t>(3 * (y * width_ + x));
  return {bytes_[i], bytes_[i + 1], bytes_[i + 2]};
}

std::string encode_png(const RgbImage& image) {
  // libpng's simplified API (1.6.22+): no setjmp/longjmp in our frames.
  png_image png;
  std::memset(&png, 0, sizeof png);
  png.version = PNG_IMAGE_VERSION;
  png.width = static_cast<png_uint_32>(image.width());
  png.height = static_cast<png_uint_32>(image.height());
  png.format = PNG_FORMAT_RGB;
  png_alloc_size_t size = 0;
  // First pass sizes the output, the second fills it.
  if (!png_image_write_to_memory(&png, nullptr, &size, 0, image.bytes().data(), 0, nullptr))
    throw std::runtime_error(std::string("PNG encoding failed: ") + png.message);
  std::string out(size, '\0');
  if (!png_image_write_to_memory(&png, out.data(), &size, 0, image.bytes().data(), 0, nullptr))
    throw std::runtime_error(std::string("PNG encoding failed: ") + png.message);
  out.resize(size);
  png_image_free(&png);
  return out;
}

void write_png(const std::string& path, const RgbImage& image) { model::write_file_atomic(path, encode_png(image)); }

}  // namespace hdlab::cli
