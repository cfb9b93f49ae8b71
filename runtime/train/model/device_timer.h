#pragma once
// How long one action took on its stage's device. The tensor executor brackets every action with
// begin()/end(); the implementation decides what "took" means:
//   host   (CPU stages): steady_clock around the call, as the CPU path always measured;
//   device (CUDA stages): two CUDA events recorded on the stage's current stream, so the duration
//          is GPU time, not launch time. end() waits for the end event only (the measurement
//          needs it; nothing else in the action is synchronised).
// Torch-free header: the CUDA implementation lives in cuda_layer.cpp, built only against a CUDA
// LibTorch; everything that uses a timer is tested on the CPU through the host one and fakes.

#include "base/result.h"
#include "base/time.h"

#include <memory>

namespace bs::runtime {

class ActionTimer
{
public:
    virtual ~ActionTimer() = default;
    /// Just before the action's work is issued (on the thread that issues it).
    virtual void begin() = 0;
    /// Just after; the action's duration in ns. Errors: a device that failed (Internal).
    virtual Result<TimeNs> end() = 0;
    /// Host steady-clock ns (since the epoch of steady_clock) of the last begin(): where the
    /// action's GPU work can start at the earliest (kernel lanes are placed relative to it).
    virtual TimeNs hostBegin() const = 0;
};

/// steady_clock timing (CPU stages).
std::unique_ptr<ActionTimer> makeHostTimer();
/// A timer for a stage on `device`: -1 = the CPU (host timer); k ≥ 0 = CUDA device k (events on
/// stage `stage`'s own stream, stageStreamHandle(); stage −1: the device's current stream at
/// begin()). Unavailable when this LibTorch has no CUDA.
Result<std::unique_ptr<ActionTimer>> makeStageTimer(int device, int stage = -1);

/// The cudaStream_t stage `stage` works on on CUDA device `device` (created on first use, one per
/// (device, stage), for the life of the process): its forward, backward (autograd runs each
/// backward op on its forward op's stream) and update, and its timer's events. The CUPTI
/// collector binds it to the stage. nullptr on the CPU or with a CPU-only LibTorch.
void* stageStreamHandle(int device, int stage);

/// Host steady-clock ns now (the clock hostBegin() uses).
TimeNs hostNowNs();

} // namespace bs::runtime
