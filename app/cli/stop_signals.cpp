#include "app/cli/stop_signals.h"

#include <atomic>
#include <cstring>

namespace bs::cli {

namespace {

std::atomic<int> g_scopes{0};
std::atomic<int> g_signal{0};
static_assert(std::atomic<int>::is_always_lock_free, "the handler may only touch lock-free atomics");

extern "C" void onStopSignal(int sig)
{
    if (g_scopes.load() == 0 || g_signal.load() != 0) {
        // Nothing can stop cleanly, or a clean stop was already asked for: the default action.
        struct sigaction dfl = {};
        dfl.sa_handler = SIG_DFL;
        sigemptyset(&dfl.sa_mask);
        ::sigaction(sig, &dfl, nullptr);
        ::raise(sig);
        return;
    }
    g_signal.store(sig);
}

} // namespace

void installStopSignals()
{
    struct sigaction action = {};
    action.sa_handler = onStopSignal;
    sigemptyset(&action.sa_mask);
    action.sa_flags = 0;
    for (int sig : {SIGINT, SIGTERM}) {
        struct sigaction previous = {};
        ::sigaction(sig, nullptr, &previous);
        if (previous.sa_handler == SIG_IGN) {
            continue; // started with the signal ignored (nohup, a background job): keep it so
        }
        ::sigaction(sig, &action, nullptr);
    }
}

StopScope::StopScope() { g_scopes.fetch_add(1); }
StopScope::~StopScope() { g_scopes.fetch_sub(1); }

int stopSignal() { return g_signal.load(); }

int stoppedExitCode() { return 128 + stopSignal(); }

void clearStopRequest() { g_signal.store(0); }

} // namespace bs::cli
