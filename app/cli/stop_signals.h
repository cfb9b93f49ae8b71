#pragma once
// SIGINT and SIGTERM for the whole CLI, installed first thing in main() so no signal arrives before
// its handler (a Ctrl-C during start-up used to kill the process outright, SIGTERM was never
// handled). Commands that can stop cleanly (train, compare --train, launch) declare it with
// StopScope and poll stopRequested(); every other command keeps the default behaviour: the handler
// re-raises the signal with its default action at once. A second signal while a clean stop is
// under way also takes the default action (a user pressing Ctrl-C twice means "now").
//
// Exit codes of a run stopped by a signal: 128 + the signal's number, as shells report it:
// 130 for SIGINT, 143 for SIGTERM (README "Exit codes").

#include <csignal>

namespace bs::cli {

/// Installs the handlers (idempotent). Async-signal-safe handler; SA_RESTART off so blocking
/// waits notice.
void installStopSignals();

/// While one exists, SIGINT/SIGTERM request a clean stop instead of ending the process.
class StopScope
{
public:
    StopScope();
    ~StopScope();
    StopScope(const StopScope&) = delete;
    StopScope& operator=(const StopScope&) = delete;
};

/// The signal that asked for a stop (SIGINT, SIGTERM), or 0.
int stopSignal();
inline bool stopRequested() { return stopSignal() != 0; }

/// 128 + stopSignal(): the exit code of a run that a signal stopped.
int stoppedExitCode();

/// Forgets a request (tests; a new run in the same process).
void clearStopRequest();

} // namespace bs::cli
