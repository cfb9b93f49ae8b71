// Run ▸ Balance stages…: the per-stage layer editor (ui/tuning/balance_dialog.h) on the tuning
// panel's settings; Apply sets the edited split as the what-if's partition, which the panel then
// predicts. Measure times the layer units through the training runtime module when it is built.
#include "ui/shell/main_window.h"
#include "ui/tuning/balance_dialog.h"
#include "ui/tuning/tuning_panel.h"
#ifdef BS_HAVE_RUN_SESSION
#include "runtime/train/exec/unit_profile.h"
#endif

#include <QStatusBar>

namespace bs::ui {

BalanceStagesDialog* MainWindow::openBalanceStages()
{
    BalanceStagesDialog::UnitMeasurer measure;
#ifdef BS_HAVE_RUN_SESSION
    measure = [](const runtime::RunConfig& config) { return runtime::measureLayerUnits(config); };
#endif
    auto* dialog = new BalanceStagesDialog(m_tuning->config(), std::move(measure), this);
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    connect(dialog, &QDialog::accepted, this, [this, dialog] {
        m_tuning->setConfig(dialog->config());
        onConfigChanged(m_tuning->config()); // the what-if predicts the new split now
        QString counts;
        for (int u : dialog->unitsPerStage()) {
            counts += (counts.isEmpty() ? QString() : QStringLiteral(", ")) + QString::number(u);
        }
        statusBar()->showMessage(tr("What-if partition: [%1] layer units per stage").arg(counts), 8000);
    });
    dialog->open();
    return dialog;
}

} // namespace bs::ui
