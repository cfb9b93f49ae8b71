#pragma once
// "Prediction vs measured": the calibrated prediction of a measured run's own settings next to
// what the run measured (bubble %, throughput, step time) with the relative error, so users see
// how far to trust the slider predictions. Fed a PredictionCheck; computes nothing itself.

#include "ui/tuning/calibration.h"

#include <QWidget>

class QLabel;
class QTableWidget;

namespace bs::ui {

class PredictionCheckView : public QWidget
{
    Q_OBJECT
public:
    explicit PredictionCheckView(QWidget* parent = nullptr);

    /// Shows `checks` (one block of rows per measured run); empty = the "no measured run" hint.
    void setChecks(const std::vector<PredictionCheck>& checks);
    /// Shows the measured per-stage times the sliders now predict from (null = device profile).
    void setCalibration(const CalibrationPtr& calibration);

    QTableWidget* table() const { return m_table; }
    QString summaryText() const;

private:
    QLabel* m_summary = nullptr;
    QTableWidget* m_table = nullptr;
    QTableWidget* m_stages = nullptr;
};

} // namespace bs::ui
