// SIGINT and SIGTERM for every bifrost command: the first asks the command to stop
// (commands on the graph connection give up within RedisConnection::kStopGrace, rounds
// stop between queries and tables); if the command has not returned within the grace
// given here, or on a second signal, the process ends at once, as a kill would (the
// ledger is never ahead of the graph, so that is safe; the embedded server, started
// with PR_SET_PDEATHSIG, then shuts down too).
#pragma once

#include <chrono>
#include <string>

namespace bifrost::cli {

/// Installs the handlers and the watchdog thread. Call once, before other threads.
void InstallStopHandlers(std::chrono::milliseconds grace);
/// The signal that asked to stop; 0 while none has.
int StopSignal();
/// Readable once a stop was asked (never drained); -1 before InstallStopHandlers.
int StopFd();
/// "bifrost: interrupted by SIGINT", the one line printed for a stop.
std::string StopLine(int signal);
/// Says the stop line was printed, so a forced exit after it adds no second line.
void MarkStopReported();

}  // namespace bifrost::cli
