#include "ui/charts/axis_ticks.h"

#include <QValueAxis>

#include <algorithm>
#include <cmath>

namespace bs::ui {

NiceTicks niceTicks(double lo, double hi, int lengthPx, int labelPx)
{
    if (!(hi > lo)) {
        hi = lo + 1;
    }
    const int most = std::clamp(lengthPx / std::max(1, labelPx), 2, 8); // intervals that fit
    const double raw = (hi - lo) / most;
    const double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
    double step = 10 * magnitude;
    for (double m : {1.0, 2.0, 5.0, 10.0}) {
        if (m * magnitude >= raw * (1 - 1e-9)) {
            step = m * magnitude;
            break;
        }
    }
    NiceTicks t;
    t.step = step;
    t.lo = std::floor(lo / step + 1e-9) * step;
    t.hi = std::ceil(hi / step - 1e-9) * step;
    t.count = static_cast<int>(std::lround((t.hi - t.lo) / step)) + 1;
    t.decimals = std::clamp(static_cast<int>(std::ceil(-std::log10(step) - 1e-9)), 0, 9);
    return t;
}

void applyNiceTicks(QValueAxis* axis, double lo, double hi, int lengthPx, const QString& unit)
{
    const int labelPx = axis->orientation() == Qt::Horizontal ? 70 : 28;
    const NiceTicks t = niceTicks(lo, hi, lengthPx, labelPx);
    axis->setTickType(QValueAxis::TicksFixed);
    axis->setRange(t.lo, t.hi);
    axis->setTickCount(t.count);
    axis->setMinorTickCount(0);
    axis->setLabelFormat(QStringLiteral("%.") + QString::number(t.decimals) + QStringLiteral("f") + unit);
    axis->setTruncateLabels(false); // the labels are short; Qt's estimate of their room is not
}

} // namespace bs::ui
