#pragma once
// Runs side by side on one time axis: one TimelineView per run sharing a TimelineZoom, a colour
// key, and the comparison table (bubble %, throughput, peak memory, lag, with differences) that
// the window places next to the charts.

#include "ui/models/comparison_model.h"
#include "ui/models/stage_stats_model.h"
#include "ui/timeline/timeline_index.h"

#include <QWidget>

#include <memory>
#include <vector>

class QLabel;
class QLineEdit;
class QTableView;

namespace bs::ui {

class TimelineLegend;
class TimelineView;
class TimelineZoom;

class CompareView : public QWidget
{
    Q_OBJECT
public:
    /// The runs it can show at once (RunWorkspace::kSlots); a slot without a run is hidden.
    static constexpr int kSlots = 4;
    /// The table panel's width without runs, and the most it takes beyond what its columns need.
    static constexpr int kMinTablePanelWidth = 260;
    static constexpr int kMaxTablePanelWidth = 470;

    explicit CompareView(QWidget* parent = nullptr);
    ~CompareView() override;

    /// Shows a run in `slot` (0 at the top). `title` is bold, `detail` muted. Null index clears;
    /// an empty title with a null index hides the slot (no run there).
    void setSlot(int slot, const QString& title, const QString& detail, std::shared_ptr<const TimelineIndex> index);
    /// Changes only the slot's title line (a live run's progress), not its timeline.
    void setSlotText(int slot, const QString& title, const QString& detail);
    /// The prediction lane: a what-if prediction drawn under the runs it predicts, on the same
    /// time axis, never in their place. Null index hides it.
    void setPrediction(const QString& title, const QString& detail, std::shared_ptr<const TimelineIndex> index);
    TimelineView* predictionTimeline() const { return m_prediction.view; }
    bool predictionVisible() const;
    /// Find: jumps to the next event `query` names ("1F2", "stage 1 backward", "mb 5") in the
    /// selected run (the top one when none is selected), zooming the shared axis onto it. The
    /// stage is the model stage: where ranks hold several, its chunk on its rank's lane
    /// (TimelineIndex::isWorkOfStage), and the placeholder and tooltip say so. Returns how many
    /// events match (0 = none or the query is not understood; the box says which).
    int findNext(const QString& query);
    QLineEdit* findBox() const { return m_find; }
    /// While exporting: what only the screen needs (the find box and its "1 of 16") is hidden, so
    /// an exported picture shows the runs, their key and titles, and no typed query.
    void setExporting(bool exporting);
    /// Marks `slot` as the selected run (title highlighted); -1 = none.
    void setSelectedSlot(int slot);
    int selectedSlot() const { return m_selected; }
    /// Summaries for the table, in slot order.
    void setSummaries(std::vector<ComparisonRow> summaries);
    /// The per-stage table (second tab) shows this report.
    void setStageReport(const profiler::Report& report);
    /// Re-fits the shared time axis to the union of the runs shown (forgets it when none is).
    void fitToRuns();

    TimelineView* timeline(int slot) const;
    /// Whether `slot` is shown (it holds a run, a prediction or a run about to start).
    bool slotShown(int slot) const;
    TimelineLegend* legend() const { return m_legend; }
    TimelineZoom* zoom() const { return m_zoom; }
    ComparisonModel* model() const { return m_model; }
    QTableView* table() const { return m_table; }
    /// The comparison / per-stage tabs. Not in this widget's layout: the window places it.
    QWidget* tablePanel() const { return m_tablePanel; }
    StageStatsModel* stageModel() const { return m_stageModel; }

Q_SIGNALS:
    /// The user clicked a run's timeline or title.
    void slotClicked(int slot);

protected:
    bool eventFilter(QObject* watched, QEvent* event) override;

private:
    struct Slot
    {
        QLabel* title = nullptr;
        TimelineView* view = nullptr;
        QString text; ///< the title's HTML without the selection mark
    };
    void renderTitle(int slot);
    /// Width of the comparison table's header and columns as sized to their contents.
    int tableContentWidth() const;
    /// Sets the table panel's minimum width to what every column needs (setSummaries).
    void fitTablePanel();
    /// The legend lists chunk shades when a shown run has ranks holding several stages.
    void updateLegendChunks();
    Slot m_prediction;
    TimelineLegend* m_legend = nullptr;
    int m_selected = -1;
    QLineEdit* m_find = nullptr;
    QLabel* m_findResult = nullptr;
    QString m_lastQuery;
    std::size_t m_nextHit = 0;
    TimelineZoom* m_zoom = nullptr;
    ComparisonModel* m_model = nullptr;
    QTableView* m_table = nullptr;
    QWidget* m_tablePanel = nullptr;
    StageStatsModel* m_stageModel = nullptr;
    QTableView* m_stageTable = nullptr;
    std::vector<Slot> m_slots;
};

} // namespace bs::ui
