#pragma once
// Value axes that read: ticks at round numbers (1, 2 or 5 × 10^k apart), as many as the axis has
// room for, and labels with just the decimals the step needs ("0.5 1.0 1.5", never "0.... 1....").

#include <QString>

class QValueAxis;

namespace bs::ui {

/// Ticks for [lo, hi] on an axis `lengthPx` long whose labels need about `labelPx` each.
struct NiceTicks
{
    double lo = 0; ///< the range widened to whole steps
    double hi = 1;
    double step = 1;
    int count = 2; ///< ticks, ends included
    int decimals = 0; ///< what the step needs
};
NiceTicks niceTicks(double lo, double hi, int lengthPx, int labelPx);

/// Sets `axis` to niceTicks(lo, hi, …) for its chart's current plot size (horizontal axes allow
/// ~70 px a label, vertical ~28 px) with fixed-point labels; the label format is "%.Nf" + `unit`.
void applyNiceTicks(QValueAxis* axis, double lo, double hi, int lengthPx, const QString& unit = {});

} // namespace bs::ui
