#pragma once
// Turns a gui_core::MaskPicture into pixels: one pixel per (query row, key) cell, the
// key's stream colour where the pair is visible, white where it is masked. The
// mask view scales it up without smoothing, so cells stay crisp squares.
#include <QColor>
#include <QImage>

#include "hdlab/gui_core/mask_picture.hpp"

namespace hdlab::gui {

inline const QColor kMaskedColour(0xFF, 0xFF, 0xFF);

// The colour of stream (HD) or copy (PHD) k: the chart palette, so legends agree.
QColor stream_colour(int copy);

// [rows x cols] pixels, Format_RGB32.
QImage mask_image(const gui_core::MaskPicture& picture);

}  // namespace hdlab::gui
