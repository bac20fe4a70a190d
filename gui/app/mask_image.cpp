#include "mask_image.hpp"

#include "hdlab/charts/charts.hpp"

namespace hdlab::gui {

QColor stream_colour(int copy) { return charts::palette(copy); }

QImage mask_image(const gui_core::MaskPicture& picture) {
  QImage image(static_cast<int>(picture.cols), static_cast<int>(picture.rows), QImage::Format_RGB32);
  // Look colours up once per copy, not per cell.
  std::vector<QRgb> colours;
  for (std::int64_t k = 0; k < picture.spec.copies; ++k) colours.push_back(stream_colour(static_cast<int>(k)).rgb());
  const QRgb masked = kMaskedColour.rgb();
  for (std::int64_t r = 0; r < picture.rows; ++r) {
    auto* line = reinterpret_cast<QRgb*>(image.scanLine(static_cast<int>(r)));
    for (std::int64_t c = 0; c < picture.cols; ++c) {
      const std::int16_t k = picture.at(r, c);
      line[c] = k < 0 ? masked : colours[static_cast<std::size_t>(k)];
    }
  }
  return image;
}

}  // namespace hdlab::gui
