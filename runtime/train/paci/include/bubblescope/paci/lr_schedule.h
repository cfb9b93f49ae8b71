#pragma once
// Learning-rate schedule of the paper's recipe: linear warm-up, then cosine decay to a floor.
// No torch: the reference trainer and the GUI's what-if panel use it too.

namespace bs::paci {

struct LrSchedule
{
    double peakLr = 3e-4;
    int warmupSteps = 0; ///< updates spent ramping linearly up to peakLr
    int totalSteps = 0; ///< update at which the cosine reaches the floor; 0 = constant after warm-up
    double minLrRatio = 0.1; ///< floor = minLrRatio · peakLr
    /// Added to updatesDone before the schedule is read: a run whose update window changed
    /// mid-way (a live Apply) continues its schedule where the training progress is.
    int updatesOffset = 0;

    /// Learning rate of the update that follows `updatesDone` earlier updates (0-based):
    /// warm-up: peak·(u+1)/warmup; then peak·(r + (1−r)·½(1+cos(π·progress))), progress clamped to 1.
    double lrAt(int updatesDone) const;
};

} // namespace bs::paci
