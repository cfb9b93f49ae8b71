#include "runtime/train/model/device_timer.h"

#include "runtime/train/model/torch_devices.h"

#include <chrono>

namespace bs::runtime {

namespace {

class HostTimer final : public ActionTimer
{
public:
    void begin() override { m_begin = hostNowNs(); }
    Result<TimeNs> end() override { return hostNowNs() - m_begin; }
    TimeNs hostBegin() const override { return m_begin; }

private:
    TimeNs m_begin = 0;
};

} // namespace

TimeNs hostNowNs()
{
    return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

std::unique_ptr<ActionTimer> makeHostTimer()
{
    return std::make_unique<HostTimer>();
}

Result<std::unique_ptr<ActionTimer>> makeStageTimer(int device, int stage)
{
    if (device < 0) {
        return makeHostTimer();
    }
    return detail::makeCudaTimer(device, stage);
}

} // namespace bs::runtime
