#pragma once
// The key of the timeline's colours: the action kinds, then the bubble causes, and (for ranks
// holding several stages) how a rank's chunks are told apart. It flows onto more lines when the
// window is narrow (heightForWidth) rather than cutting entries at the right edge.

#include "ui/common/color_role.h"

#include <QRect>
#include <QWidget>

#include <vector>

namespace bs::ui {

class TimelineLegend : public QWidget
{
    Q_OBJECT
public:
    explicit TimelineLegend(QWidget* parent = nullptr);
    /// Roles to show, in order (default: F B I W U, then every bubble cause).
    void setRoles(std::vector<ColorRole> roles);
    /// v > 1: adds one entry per chunk ("chunk 0", "chunk 1", ...) in the shade (and hatch) the
    /// timeline draws that chunk's actions with; v <= 1 removes them.
    void setChunks(int stagesPerRank);
    int chunks() const { return m_chunks; }
    QSize sizeHint() const override;
    QSize minimumSizeHint() const override;
    bool hasHeightForWidth() const override { return true; }
    int heightForWidth(int width) const override;

    /// Where each entry (swatch and name; the "bubbles:" prefix belongs to the first bubble
    /// entry) is drawn at `width`, in order: roles first, then chunks.
    std::vector<QRect> entryRects(int width) const;

protected:
    void paintEvent(QPaintEvent* event) override;

private:
    struct Entry
    {
        QString prefix; ///< muted text before the swatch ("bubbles:", "chunks:")
        QString name;
        ColorRole role = ColorRole::Forward;
        int chunk = -1; ///< >= 0: a chunk entry, drawn in the forward colour's chunk shade
    };
    std::vector<Entry> entries() const;
    int entryWidth(const Entry& entry) const;
    int lineHeight() const;

    std::vector<ColorRole> m_roles;
    int m_chunks = 1;
};

} // namespace bs::ui
