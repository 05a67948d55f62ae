#include "interrupt.h"

#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <atomic>
#include <csignal>
#include <cstring>
#include <thread>

namespace bifrost::cli {
namespace {

std::atomic<int> g_signal{0};
std::atomic<bool> g_reported{false};
int g_stop_pipe[2] = {-1, -1};   // written once, on the first signal; never read
int g_watch_pipe[2] = {-1, -1};  // one byte per signal, for the watchdog

void OnSignal(int sig) {
  int expected = 0;
  char byte = 1;
  if (g_signal.compare_exchange_strong(expected, sig)) (void)!::write(g_stop_pipe[1], &byte, 1);
  (void)!::write(g_watch_pipe[1], &byte, 1);
}

// Waits for the first signal, then for the command to return (which ends the process)
// for at most `grace`, or for a second signal; then ends the process itself.
void Watchdog(std::chrono::milliseconds grace) {
  char byte;
  while (::read(g_watch_pipe[0], &byte, 1) != 1) {
  }
  pollfd second{g_watch_pipe[0], POLLIN, 0};
  while (::poll(&second, 1, static_cast<int>(grace.count())) < 0 && errno == EINTR) {
  }
  int sig = g_signal.load();
  if (!g_reported) {
    std::string line = StopLine(sig) + " (forced: the command did not stop in time)\n";
    (void)!::write(STDERR_FILENO, line.data(), line.size());
  }
  ::_exit(128 + sig);
}

}  // namespace

void InstallStopHandlers(std::chrono::milliseconds grace) {
  if (g_stop_pipe[0] >= 0) return;
  if (::pipe2(g_stop_pipe, O_CLOEXEC | O_NONBLOCK) != 0 ||
      ::pipe2(g_watch_pipe, O_CLOEXEC | O_NONBLOCK) != 0)
    return;  // without pipes the default dispositions stay: a signal still ends bifrost
  int flags = ::fcntl(g_watch_pipe[0], F_GETFL);
  ::fcntl(g_watch_pipe[0], F_SETFL, flags & ~O_NONBLOCK);  // the watchdog blocks on it
  std::thread(Watchdog, grace).detach();
  struct sigaction sa {};
  sa.sa_handler = OnSignal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  ::sigaction(SIGINT, &sa, nullptr);
  ::sigaction(SIGTERM, &sa, nullptr);
}

int StopSignal() { return g_signal.load(); }

void MarkStopReported() { g_reported = true; }

int StopFd() { return g_stop_pipe[0]; }

std::string StopLine(int signal) {
  const char* name = signal == SIGINT ? "SIGINT" : signal == SIGTERM ? "SIGTERM" : "a signal";
  return std::string("bifrost: interrupted by ") + name;
}

}  // namespace bifrost::cli
