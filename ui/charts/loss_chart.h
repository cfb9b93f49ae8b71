#pragma once
// Loss against time for every run that has metrics (live RunSession runs or opened run
// directories). Simulated runs have no loss; the chart then says so instead of drawing axes.

#include "ui/bridge/run_backend.h"

#include <QChartView>

namespace bs::ui {

struct LossCurve
{
    QString label;
    std::vector<MetricSample> samples;
};

class LossChartView : public QChartView
{
    Q_OBJECT
public:
    explicit LossChartView(QWidget* parent = nullptr);
    /// One line per curve with samples; `targetLoss` > 0 adds a dashed target line.
    void setCurves(const std::vector<LossCurve>& curves, double targetLoss = 0);
    bool hasData() const { return m_hasData; }

private:
    bool m_hasData = false;
};

} // namespace bs::ui
