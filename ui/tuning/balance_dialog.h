#pragma once
// Run ▸ Balance stages…: a per-stage layer editor for the what-if. Each row is one stage with its
// layer units (embedding, blocks, final norm, head) in a spin box, what it holds, and the what-if's
// predicted forward + backward time per micro-batch and peak memory for the edited split (the
// same simulation the panel runs, so Apply predicts exactly what the dialog showed). Balance fills
// the partitioner's optimum (runtime::choosePartition with pipeline.partition = "measured": the
// measured unit costs when Measure ran or the config carries them, FLOP estimates otherwise);
// FLOPs split restores the historical split. Apply hands back the config with the split as an
// explicit pipeline.partition. Torch-free: measuring goes through an injected function.

#include "ui/tuning/what_if.h"

#include <QDialog>

#include <functional>
#include <vector>

class QLabel;
class QPushButton;
class QSpinBox;
class QTableWidget;

namespace bs::ui {

class BalanceStagesDialog : public QDialog
{
    Q_OBJECT
public:
    /// Times and sizes every layer unit of a config on its device (runtime/train/exec/unit_profile.h's
    /// measureLayerUnits through the training runtime module); empty = no Measure button.
    using UnitMeasurer = std::function<Result<std::vector<runtime::UnitCost>>(const runtime::RunConfig&)>;

    explicit BalanceStagesDialog(const WhatIfConfig& config, UnitMeasurer measure = {}, QWidget* parent = nullptr);

    /// The what-if settings with the edited split as pipeline.partition = explicit counts (and the
    /// measured unit costs, when there are some).
    WhatIfConfig config() const;
    std::vector<int> unitsPerStage() const { return m_units; }
    /// Sets the split (counts per stage summing to the model's units) and predicts it.
    void setUnitsPerStage(const std::vector<int>& units);

    /// The figures of the split shown: per stage F + B ms per micro-batch, peak bytes.
    const std::vector<double>& predictedStageMs() const { return m_stageMs; }
    const std::vector<std::int64_t>& predictedStageBytes() const { return m_stageBytes; }
    QSpinBox* unitsSpin(int stage) const;
    QTableWidget* table() const { return m_table; }
    QPushButton* balanceButton() const { return m_balance; }
    QLabel* summary() const { return m_summary; }

    /// The partitioner's optimum under the dialog's unit costs (what Balance does).
    void balance();
    /// The FLOPs split of the blocks (pipeline.partition = "flops").
    void resetToFlops();
    /// Runs the measurer (what Measure does); its unit costs then drive Balance and the figures.
    void measure();

private:
    void onUnitsEdited(int stage, int value);
    void rebuildRows();
    void predict();
    WhatIfConfig withPartition(const std::string& mode) const;

    WhatIfConfig m_config;
    UnitMeasurer m_measure;
    std::vector<int> m_units;
    std::vector<double> m_stageMs;
    std::vector<std::int64_t> m_stageBytes;
    QTableWidget* m_table = nullptr;
    QLabel* m_summary = nullptr;
    QLabel* m_costs = nullptr;
    QPushButton* m_balance = nullptr;
    QPushButton* m_measureButton = nullptr;
    bool m_filling = false;
};

} // namespace bs::ui
