#pragma once
// The training-metrics tab: a time-axis selector (virtual / wall) over the loss, drift, noise-scale
// and throughput views of every open run. Wall time is offered only when some run recorded it
// (live runs do; simulated runs have virtual time only, and the selector says so).

#include "ui/charts/loss_chart.h"

#include <QWidget>

class QComboBox;
class QDoubleSpinBox;
class QLabel;

namespace bs::ui {

class MetricsPanel : public QWidget
{
    Q_OBJECT
public:
    explicit MetricsPanel(QWidget* parent = nullptr);

    /// Replaces the runs of all three views; `targetLoss` > 0 draws the target and time-to-target
    /// (and shows it in the target box).
    void setRuns(const std::vector<LossCurve>& runs, double targetLoss = 0);
    double targetLoss() const;
    void setTimeAxis(TimeAxis axis);
    TimeAxis timeAxis() const { return m_loss->timeAxis(); }
    /// True when the wall-time choice is enabled (some run has wall times).
    bool wallTimeAvailable() const;
    bool hasData() const { return m_loss->hasData(); }

    QComboBox* axisSelector() const { return m_axis; }
    /// The runs' key above the three views: each run's colour and whole label, wrapped onto more
    /// lines rather than cut (the views draw no legend of their own).
    QLabel* key() const { return m_key; }
    /// The names the key gives `runs`: distinctLabels() of their labels.
    static QStringList keyNames(const std::vector<LossCurve>& runs);
    QDoubleSpinBox* targetBox() const { return m_target; }

Q_SIGNALS:
    /// The user typed a new target loss (0 = none); the views already show it.
    void targetLossEdited(double targetLoss);

public:
    LossChartView* loss() const { return m_loss; }
    DriftChartView* drift() const { return m_drift; }
    NoiseScaleChartView* noiseScale() const { return m_noise; }
    ThroughputChartView* throughput() const { return m_throughput; }

private:
    void updateSelector(const std::vector<LossCurve>& runs);

    QComboBox* m_axis = nullptr;
    QLabel* m_note = nullptr;
    QLabel* m_key = nullptr;
    QDoubleSpinBox* m_target = nullptr;
    std::vector<LossCurve> m_runs;
    LossChartView* m_loss = nullptr;
    DriftChartView* m_drift = nullptr;
    NoiseScaleChartView* m_noise = nullptr;
    ThroughputChartView* m_throughput = nullptr;
};

} // namespace bs::ui
